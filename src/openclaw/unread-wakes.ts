/** @module Wakes OpenClaw had queued and not read when the plugin stopped: kept on disk, handed over again once after OpenClaw restarts. */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { HandedBatch } from "./system-event-hand-off.js";

/** OpenClaw 2026.9.6 keeps its system-event queues in this process-global map (src/infra/system-events.ts). */
const OPENCLAW_QUEUES = Symbol.for("openclaw.systemEvents.queues");
const FILE = "unread-wakes.json";

interface Saved {
  /** The process that wrote it: a start in the same process (a reload) finds OpenClaw's queue still holding them. */
  process: string;
  batches: HandedBatch[];
}

/** This process, told apart from a later one with the same pid by the time it started. */
function processIdentity(): string {
  return `${process.pid}:${performance.timeOrigin}`;
}

/**
 * The contextKeys in OpenClaw's system-event queues, read without changing them: `{ queue: [{ contextKey, … }] }`
 * per session key. Undefined when this OpenClaw keeps them in another shape (the hand-off then probes instead).
 */
export function queuedContextKeys(): Set<string> | undefined {
  const queues = (globalThis as Record<symbol, unknown>)[OPENCLAW_QUEUES];
  if (!(queues instanceof Map)) return undefined;
  const keys = new Set<string>();
  for (const entry of queues.values()) {
    const queue = (entry as { queue?: unknown } | undefined)?.queue;
    if (!Array.isArray(queue)) return undefined;
    for (const event of queue) {
      const key = (event as { contextKey?: unknown } | undefined)?.contextKey;
      if (typeof key === "string") keys.add(key);
    }
  }
  return keys;
}

/**
 * Written at the service's stop, before OpenClaw clears its queues on exit. Readable by the owner only: the texts
 * are the wakes' (wrapped) payloads. No file when nothing is unread, so a clean stop leaves nothing behind.
 */
export function saveUnread(dir: string, batches: readonly HandedBatch[]): void {
  const file = path.join(dir, FILE);
  if (batches.length === 0) {
    rmSync(file, { force: true });
    return;
  }
  // The wakes' texts are payload: only OpenClaw's user reads them, as the journal's files.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const saved: Saved = { process: processIdentity(), batches: [...batches] };
  const temporary = `${file}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writeFileSync(temporary, JSON.stringify(saved), { mode: 0o600, flag: "wx" });
  renameSync(temporary, file);
}

/** What the previous stop left: the batches, and whether OpenClaw's queue still holds them (the same process). */
export interface LeftUnread {
  /** Written by this process: a reload or an in-process restart, where OpenClaw's queue kept them. */
  stillQueued: boolean;
  batches: HandedBatch[];
}

/**
 * Reads what the previous stop left unread and removes the record: a new process hands the batches over again once,
 * and a batch is saved again at the next stop only if it is again unread. A file that cannot be read is dropped,
 * told.
 */
export function takeUnread(dir: string, warn: (message: string) => void): LeftUnread {
  const file = path.join(dir, FILE);
  let saved: Saved;
  try {
    saved = JSON.parse(readFileSync(file, "utf8")) as Saved;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      warn(
        `the wakes OpenClaw had not read before it stopped could not be read back (${(error as Error).message})`,
      );
      rmSync(file, { force: true });
    }
    return { stillQueued: false, batches: [] };
  }
  rmSync(file, { force: true });
  const batches = Array.isArray(saved.batches)
    ? saved.batches.filter(
        (batch) =>
          typeof batch?.sessionKey === "string" &&
          (batch.agentId === undefined || typeof batch.agentId === "string") &&
          (batch.eventIds === undefined ||
            (Array.isArray(batch.eventIds) && batch.eventIds.every((id) => typeof id === "string"))) &&
          typeof batch.key === "string" &&
          typeof batch.text === "string" &&
          batch.text !== "",
      )
    : [];
  return { stillQueued: saved.process === processIdentity(), batches };
}

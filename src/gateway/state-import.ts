/** @module Imports the JSON-lines state files of earlier versions into a new state database, once, then renames them. */
import { createReadStream, existsSync, readFileSync, renameSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { HostLogger } from "../host/contract.js";
import type { StateDb } from "./state-db.js";
import { SETTING } from "./state-schema.js";

/** The files earlier versions kept in the state directory. */
export const LEGACY_STATE_FILES = {
  queue: "queue.jsonl",
  transcript: "transcript.jsonl",
  sessions: "sessions.jsonl",
  outbox: "outbox.jsonl",
  lastRoute: "last-route.json",
} as const;

export const IMPORTED_SUFFIX = ".imported";

export interface ImportSummary {
  queue: number;
  transcript: number;
  messages: number;
  outbox: number;
  lastRoute: boolean;
}

type Line = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const textOrNull = (value: unknown): string | null => text(value) ?? null;

/** Each record of a JSON-lines file, streamed: sessions.jsonl may be far larger than memory should hold. */
async function* records(file: string): AsyncGenerator<Line> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      // A line cut by a crash mid-write; the rest of the file is still good.
      continue;
    }
    if (record !== null && typeof record === "object" && !Array.isArray(record)) yield record as Line;
  }
}

/**
 * Imports when the database was created by this version and has not imported yet. Everything goes in one
 * transaction with the "done" mark, so a crash half-way imports again from the start next time; the files are
 * renamed to `<name>.imported` afterwards, kept for the user to delete.
 */
export async function importLegacyState(
  state: StateDb,
  stateDir: string,
  logger: Pick<HostLogger, "info">,
): Promise<ImportSummary | undefined> {
  const { db } = state;
  const mark = db.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck();
  const setMark = db.prepare<[string, string]>(
    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  if (mark.get(SETTING.jsonlImport) !== "pending") return undefined;
  const file = (name: string) => path.join(stateDir, name);
  const present: string[] = Object.values(LEGACY_STATE_FILES).filter((name) => existsSync(file(name)));
  if (present.length === 0) {
    setMark.run(SETTING.jsonlImport, "done");
    return undefined;
  }

  const importedAt = Date.now();
  const time = (value: unknown): number => {
    const ms = typeof value === "string" ? Date.parse(value) : Number.NaN;
    return Number.isNaN(ms) ? importedAt : ms;
  };
  const source = (record: Line) => {
    const from = (record.source ?? {}) as Line;
    return [text(from.hook) ?? "", text(from.requestId) ?? "", textOrNull(from.mappingId)] as const;
  };
  const insertQueued = db.prepare(
    "INSERT OR IGNORE INTO queue (at, event_id, text, untrusted, hook, request_id, mapping_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const insertEvent = db.prepare(
    `INSERT OR IGNORE INTO transcript (at, kind, event_id, text, untrusted, hook, request_id, mapping_id)
     VALUES (?, 'system-event', ?, ?, ?, ?, ?, ?)`,
  );
  const insertHeartbeat = db.prepare(
    "INSERT INTO transcript (at, kind, reasons, drained) VALUES (?, 'heartbeat', ?, ?)",
  );
  const insertMessage = db.prepare(
    "INSERT INTO messages (session_key, at, run_id, role, content) VALUES (?, ?, ?, ?, ?)",
  );
  const insertOutbox = db.prepare(
    `INSERT OR IGNORE INTO outbox (at, run_id, request_id, hook, mapping_id, requested, channel, recipient, text, status, reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const isEvent = (record: Line) =>
    (record.kind === undefined || record.kind === "system-event") &&
    text(record.eventId) !== undefined &&
    text(record.text) !== undefined;
  const eventRow = (record: Line) =>
    [
      time(record.at),
      record.eventId,
      record.text,
      record.untrusted === false ? 0 : 1,
      ...source(record),
    ] as const;

  const summary: ImportSummary = { queue: 0, transcript: 0, messages: 0, outbox: 0, lastRoute: false };
  const has = (name: string) => present.includes(name);
  // One transaction across the awaits of the line reader: nothing else writes to the database before the gateway starts.
  db.exec("BEGIN");
  try {
    if (has(LEGACY_STATE_FILES.queue)) {
      for await (const record of records(file(LEGACY_STATE_FILES.queue))) {
        if (isEvent(record)) summary.queue += insertQueued.run(...eventRow(record)).changes;
      }
    }
    if (has(LEGACY_STATE_FILES.transcript)) {
      for await (const record of records(file(LEGACY_STATE_FILES.transcript))) {
        if (record.kind === "heartbeat") {
          const reasons = Array.isArray(record.reasons) ? record.reasons.map(String) : [];
          const drained = typeof record.drained === "number" ? record.drained : 0;
          summary.transcript += insertHeartbeat.run(
            time(record.at),
            JSON.stringify(reasons),
            drained,
          ).changes;
        } else if (isEvent(record)) {
          summary.transcript += insertEvent.run(...eventRow(record)).changes;
        }
      }
    }
    if (has(LEGACY_STATE_FILES.sessions)) {
      for await (const record of records(file(LEGACY_STATE_FILES.sessions))) {
        const key = text(record.sessionKey);
        const content = text(record.content);
        if (key === undefined || content === undefined) continue;
        if (record.role !== "system" && record.role !== "user" && record.role !== "assistant") continue;
        insertMessage.run(key, time(record.at), textOrNull(record.runId), record.role, content);
        summary.messages++;
      }
    }
    if (has(LEGACY_STATE_FILES.outbox)) {
      for await (const record of records(file(LEGACY_STATE_FILES.outbox))) {
        const runId = text(record.runId);
        if (runId === undefined || (record.status !== "delivered" && record.status !== "undeliverable"))
          continue;
        summary.outbox += insertOutbox.run(
          time(record.at),
          runId,
          text(record.requestId) ?? "",
          text(record.hook) ?? "",
          textOrNull(record.mappingId),
          text(record.requested) ?? text(record.channel) ?? "",
          text(record.channel) ?? "",
          textOrNull(record.to),
          text(record.text) ?? "",
          record.status,
          textOrNull(record.reason),
        ).changes;
      }
    }
    if (has(LEGACY_STATE_FILES.lastRoute)) {
      const route = readRoute(file(LEGACY_STATE_FILES.lastRoute));
      if (route !== undefined) {
        setMark.run(SETTING.lastRoute, route);
        summary.lastRoute = true;
      }
    }
    setMark.run(SETTING.jsonlImport, "done");
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw new Error(
      `cannot import the state files of an earlier version from ${stateDir}: ${(error as Error).message}`,
    );
  }

  for (const name of present) renameSync(file(name), file(`${name}${IMPORTED_SUFFIX}`));
  logger.info("imported the state files of an earlier version into the state database", {
    files: present.join(","),
    ...summary,
  });
  return summary;
}

/** The route file as JSON text, when it holds a route (`{ channel, to? }`). */
function readRoute(file: string): string | undefined {
  try {
    const route = JSON.parse(readFileSync(file, "utf8")) as Line;
    if (typeof route?.channel !== "string") return undefined;
    return JSON.stringify(
      route.to === undefined ? { channel: route.channel } : { channel: route.channel, to: route.to },
    );
  } catch {
    return undefined;
  }
}

/** @module Retention: rows older than retainDays leave the transcript, outbox and messages in chunks; the queue stays; the file shrinks. */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";
import { type Retention, startRetention } from "../../src/gateway/state-retention.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const OLD = NOW - 31 * DAY_MS;
const RECENT = NOW - 29 * DAY_MS;

let dir: string;
let state: StateDb;
let retention: Retention | undefined;
const infos: Array<Record<string, unknown>> = [];
const logger = {
  info: (_message: string, fields?: Record<string, unknown>) => void infos.push(fields ?? {}),
};

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-retention-"));
  state = openStateDb(dir);
  infos.length = 0;
});
afterEach(async () => {
  await retention?.stop();
  retention = undefined;
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Rows at a given time in every table, written as the gateway writes them (their `at` moved afterwards). */
function seed(at: number, tag: string, count: number, text = "x"): void {
  const store = createSessionStore(state, undefined);
  for (let i = 0; i < count; i++) {
    const id = `${tag}-${i}`;
    store.enqueue({
      source: { hook: "wake", requestId: id },
      sessionKey: "main",
      text,
      untrusted: true,
      eventId: id,
    });
    store.appendHistory(`hook:${tag}`, [{ role: "user", content: text }], id);
    state.db
      .prepare(
        "INSERT INTO outbox (at, run_id, request_id, hook, requested, channel, text, status) VALUES (?, ?, ?, 'agent', 'last', 'signal', ?, 'delivered')",
      )
      .run(at, id, id, text);
  }
  state.flush();
  state.db.prepare("UPDATE queue SET at = ?").run(at);
  state.db.prepare("UPDATE messages SET at = ? WHERE session_key = ?").run(at, `hook:${tag}`);
}

const count = (table: string) => state.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe("state retention", () => {
  it("deletes transcript, outbox and message rows older than retainDays, in chunks, and keeps the queue", async () => {
    seed(OLD, "old", 7);
    createSessionStore(state, undefined).drain(["interval"]);
    state.db.prepare("UPDATE transcript SET at = ?").run(OLD);
    seed(RECENT, "recent", 3);
    // The recent events are still queued: the queue is never purged, however old a row is.
    state.db.prepare("UPDATE queue SET at = ?").run(OLD);

    retention = startRetention(state, { retainDays: 30, logger, now: () => NOW, chunkRows: 2 });
    const deleted = await retention.run();

    // 7 events and their heartbeat; 7 deliveries; 7 messages.
    expect(deleted).toEqual({ transcript: 8, outbox: 7, messages: 7 });
    expect([count("transcript"), count("outbox"), count("messages"), count("queue")]).toEqual([0, 3, 3, 3]);
    expect(infos).toEqual([
      expect.objectContaining({ retainDays: 30, transcript: 8, outbox: 7, messages: 7 }),
    ]);
    // Nothing older is left: a second run deletes nothing and says nothing.
    expect(await retention.run()).toEqual({ transcript: 0, outbox: 0, messages: 0 });
    expect(infos).toHaveLength(1);
  });

  it("a session key unused for retainDays starts fresh", async () => {
    seed(OLD, "quiet", 1);
    retention = startRetention(state, { retainDays: 30, logger, now: () => NOW });
    await retention.run();
    expect(createSessionStore(state, undefined).history("hook:quiet")).toEqual([]);
  });

  it("hands the pages of deleted rows back to the file system and empties the write-ahead log", async () => {
    seed(OLD, "big", 400, "y".repeat(8_000));
    createSessionStore(state, undefined).drain(["interval"]);
    state.db.prepare("UPDATE transcript SET at = ?").run(OLD);
    state.db.pragma("wal_checkpoint(TRUNCATE)");
    const pagesBefore = state.db.pragma("page_count", { simple: true }) as number;

    retention = startRetention(state, { retainDays: 30, logger, now: () => NOW });
    await retention.run();

    const pagesAfter = state.db.pragma("page_count", { simple: true }) as number;
    expect(pagesAfter).toBeLessThan(pagesBefore / 4);
    expect(state.db.pragma("freelist_count", { simple: true })).toBe(0);
    const wal = path.join(dir, "state.sqlite-wal");
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
  });
});

/** @module A state database of the first schema is upgraded in place at start: its queue, transcript and route kept. */
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { SystemEvent } from "../../src/events.js";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";
import { STATE_SCHEMA_VERSION } from "../../src/gateway/state-schema.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

// The first schema's queue and settings, as version 1 created them (the other tables did not change).
const VERSION_1 = `
CREATE TABLE queue (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, event_id TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
  untrusted INTEGER NOT NULL, hook TEXT NOT NULL, request_id TEXT NOT NULL, mapping_id TEXT);
CREATE TABLE transcript (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('system-event', 'heartbeat')), event_id TEXT, text TEXT, untrusted INTEGER,
  hook TEXT, request_id TEXT, mapping_id TEXT, reasons TEXT, drained INTEGER);
CREATE UNIQUE INDEX transcript_event_id ON transcript (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX transcript_at ON transcript (at);
CREATE TABLE messages (seq INTEGER PRIMARY KEY, session_key TEXT NOT NULL, at INTEGER NOT NULL, run_id TEXT,
  event_id TEXT, role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')), content TEXT NOT NULL);
CREATE INDEX messages_by_key ON messages (session_key, seq);
CREATE UNIQUE INDEX messages_event_id ON messages (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX messages_at ON messages (at);
CREATE TABLE outbox (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, run_id TEXT NOT NULL UNIQUE,
  request_id TEXT NOT NULL, hook TEXT NOT NULL, mapping_id TEXT, requested TEXT NOT NULL, channel TEXT NOT NULL,
  recipient TEXT, text TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('delivered', 'undeliverable')), reason TEXT);
CREATE INDEX outbox_at ON outbox (at);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO settings VALUES ('jsonl_import', 'done'), ('last_route', '{"channel":"signal","to":"+15550001111"}');
INSERT INTO queue (at, event_id, text, untrusted, hook, request_id, mapping_id)
  VALUES (1, 'e1', 'queued before the upgrade', 1, 'wake', 'r1', NULL);
INSERT INTO transcript (at, kind, event_id, text, untrusted, hook, request_id)
  VALUES (1, 'system-event', 'e0', 'drained before the upgrade', 1, 'wake', 'r0');
PRAGMA user_version = 1;
`;

const opened: StateDb[] = [];
afterEach(async () => {
  for (const state of opened.splice(0)) state.close();
  await cleanupCli();
});

function event(eventId: string): SystemEvent {
  return {
    source: { hook: "wake", requestId: `r-${eventId}` },
    sessionKey: "main",
    text: `text ${eventId}`,
    untrusted: true,
    eventId,
  };
}

describe("state database upgrade", () => {
  it("upgrades a version 1 file in place, keeping its rows, and still ignores ids already queued or drained", () => {
    const dir = makeTempDir();
    const old = new Database(path.join(dir, "state.sqlite"));
    old.exec(VERSION_1);
    old.close();

    const state = openStateDb(dir);
    opened.push(state);
    expect(state.created).toBe(false);
    expect(state.db.pragma("user_version", { simple: true })).toBe(STATE_SCHEMA_VERSION);
    const settings = state.db.prepare("SELECT key FROM settings ORDER BY key").pluck().all();
    expect(settings).toEqual(["last_route"]);

    const store = createSessionStore(state, undefined);
    expect(store.lastRoute()).toEqual({ channel: "signal", to: "+15550001111" });
    store.enqueue(event("e1"));
    store.enqueue(event("e0"));
    store.enqueue(event("e2"));
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1", "e2"]);
    expect(store.drain(["test"])).toBe(2);
    expect(store.pending()).toEqual([]);
  });

  it("refuses a file of a newer schema, naming it", () => {
    const dir = makeTempDir();
    const newer = new Database(path.join(dir, "state.sqlite"));
    newer.exec("CREATE TABLE x (a); PRAGMA user_version = 99;");
    newer.close();
    expect(() => openStateDb(dir)).toThrow(
      /state\.sqlite is not a state database of this hooks version \(schema 99/,
    );
  });
});

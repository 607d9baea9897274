/** @module The state database's tables and indexes, created once when the file is new. */

/** Bumped when the tables change; an older file is upgraded by STATE_UPGRADES, any other version refused. */
export const STATE_SCHEMA_VERSION = 2;

/** The main session's queue, as a table of this name (the upgrade from version 1 builds it beside the old one). */
function queueTable(name: string): string {
  return `CREATE TABLE ${name} (
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  text TEXT NOT NULL,
  untrusted INTEGER NOT NULL,
  hook TEXT NOT NULL,
  request_id TEXT NOT NULL,
  mapping_id TEXT
);`;
}

/**
 * Times are integer epoch milliseconds. Each event id, run id and session key is a column of its own, so a
 * person with the `sqlite3` shell can query them; `source` fields are split the same way.
 */
export const STATE_SCHEMA = `
-- System events for the main session, not yet drained by a heartbeat. Never purged: work not yet delivered.
-- No index on event_id: the gateway keeps the queued ids in memory, and an index on random ids made every insert
-- dirty a page of its own (about 17 µs per queued event).
${queueTable("queue")}

-- The main session's transcript: drained events (at = when queued), each drain followed by its heartbeat
-- (at = when it ran, reasons as a JSON array, drained = how many events it moved).
CREATE TABLE transcript (
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('system-event', 'heartbeat')),
  event_id TEXT,
  text TEXT,
  untrusted INTEGER,
  hook TEXT,
  request_id TEXT,
  mapping_id TEXT,
  reasons TEXT,
  drained INTEGER
);
CREATE UNIQUE INDEX transcript_event_id ON transcript (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX transcript_at ON transcript (at);

-- Every session's conversation; a system note for a session other than main carries its event id.
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  session_key TEXT NOT NULL,
  at INTEGER NOT NULL,
  run_id TEXT,
  event_id TEXT,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL
);
-- A key's last messages are read through this index: the cost does not grow with the other keys' rows.
CREATE INDEX messages_by_key ON messages (session_key, seq);
CREATE UNIQUE INDEX messages_event_id ON messages (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX messages_at ON messages (at);

-- Every delivery:send, once per run id.
CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  run_id TEXT NOT NULL UNIQUE,
  request_id TEXT NOT NULL,
  hook TEXT NOT NULL,
  mapping_id TEXT,
  requested TEXT NOT NULL,
  channel TEXT NOT NULL,
  recipient TEXT,
  text TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('delivered', 'undeliverable')),
  reason TEXT
);
CREATE INDEX outbox_at ON outbox (at);

-- Small values: the last route, when the file was created.
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
`;

/** Keys of the settings table. */
export const SETTING = {
  lastRoute: "last_route",
  /** When the file was created (epoch ms, as text); written with the tables, so a file from before it has none. */
  createdAt: "created_at",
  /**
   * The moment (epoch ms, as text) up to which every commit is on disk: written before each sync of the write-ahead
   * log. A start stores again what the journal finished after it.
   */
  syncedThrough: "synced_through",
} as const;

/**
 * What turns a file of schema version N into N + 1, run in one transaction at start. Version 1 kept a unique index
 * on the queue's event ids, and a setting of an import of files that no longer exist.
 */
export const STATE_UPGRADES: Readonly<Record<number, string>> = {
  1: `
${queueTable("queue_v2")}
INSERT INTO queue_v2 SELECT seq, at, event_id, text, untrusted, hook, request_id, mapping_id FROM queue;
DROP TABLE queue;
ALTER TABLE queue_v2 RENAME TO queue;
DELETE FROM settings WHERE key = 'jsonl_import';
`,
};

/** @module Reads the state database read-only (also while a gateway writes it): for `hooks state` and tests. */
import { existsSync } from "node:fs";
import path from "node:path";
import { loadSqlite } from "./sqlite.js";
import { STATE_DB_FILE } from "./state-db.js";
import {
  type HistoryEntry,
  historyEntryOf,
  type MessageRow,
  type OutboxRecord,
  type OutboxRow,
  outboxRecordOf,
  type QueuedSystemEvent,
  type QueueRow,
  queuedEventOf,
  type TranscriptEntry,
  type TranscriptRow,
  transcriptEntryOf,
} from "./state-records.js";
import { STATE_SCHEMA_VERSION } from "./state-schema.js";

export interface ReadWindow {
  /** Only rows at or after this time (epoch ms). */
  sinceMs?: number;
  /** Only the last this many rows (still printed oldest first). */
  limit?: number;
}

export interface StateReader {
  readonly file: string;
  queue(): QueuedSystemEvent[];
  transcript(window?: ReadWindow): TranscriptEntry[];
  session(sessionKey: string, window?: ReadWindow): HistoryEntry[];
  outbox(window?: ReadWindow): OutboxRecord[];
  close(): void;
}

/** The state directory has no database yet (or is not the one `hooks serve` uses). */
export class NoStateDatabaseError extends Error {
  override readonly name = "NoStateDatabaseError";
}

/** The last `limit` rows at or after `sinceMs`, oldest first; -1 is SQLite's "no limit". */
function lastRows(table: string, where: string): string {
  return `SELECT * FROM (SELECT * FROM ${table} WHERE ${where} AND at >= @since ORDER BY seq DESC LIMIT @limit) ORDER BY seq`;
}

const windowParams = (window: ReadWindow = {}) => ({ since: window.sinceMs ?? 0, limit: window.limit ?? -1 });

export function openStateReader(stateDir: string): StateReader {
  const file = path.join(stateDir, STATE_DB_FILE);
  if (!existsSync(file)) {
    throw new NoStateDatabaseError(
      `no state database in ${stateDir} (no ${STATE_DB_FILE}): pass the --state-dir that \`hooks serve\` uses`,
    );
  }
  const Database = loadSqlite();
  // Read-only: a gateway may be writing it; in WAL mode readers and the writer do not block each other.
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const version = db.pragma("user_version", { simple: true });
  if (version !== STATE_SCHEMA_VERSION) {
    db.close();
    throw new Error(`${file} is not a state database of this hooks version (schema ${String(version)})`);
  }
  const queue = db.prepare<[], QueueRow>("SELECT * FROM queue ORDER BY seq");
  const transcript = db.prepare<[ReturnType<typeof windowParams>], TranscriptRow>(
    lastRows("transcript", "1"),
  );
  const session = db.prepare<[ReturnType<typeof windowParams> & { key: string }], MessageRow>(
    lastRows("messages", "session_key = @key"),
  );
  const outbox = db.prepare<[ReturnType<typeof windowParams>], OutboxRow>(lastRows("outbox", "1"));
  return {
    file,
    queue: () => queue.all().map(queuedEventOf),
    transcript: (window) => transcript.all(windowParams(window)).map(transcriptEntryOf),
    session: (key, window) => session.all({ ...windowParams(window), key }).map(historyEntryOf),
    outbox: (window) => outbox.all(windowParams(window)).map(outboxRecordOf),
    close: () => db.close(),
  };
}

/**
 * @module A stopped gateway's state, read back by the bench: `<state dir>/state.sqlite` opened read-only
 * (better-sqlite3), and the sizes of what the state directory holds on disk (journal, database, log files).
 * A build from before the database (JSON-lines state files) is still read, so compare.mjs can measure it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export const STATE_DB_FILE = "state.sqlite";
export const JOURNAL_DIR = "hooks-journal";

let Database;
/** better-sqlite3 is an optional dependency of the package; the bench needs it to read a gateway's state. */
function loadSqlite() {
  if (Database) return Database;
  try {
    Database = createRequire(import.meta.url)("better-sqlite3");
  } catch (error) {
    throw new Error(
      `the bench reads the gateway's state.sqlite with better-sqlite3, which could not be loaded: ${error.message}`,
    );
  }
  return Database;
}

function exists(file) {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `read(db)` on the state database of a stopped gateway, opened read-only; undefined when the directory
 * holds no database (a build from before it). SQLite may create the -shm file beside it to read a WAL database:
 * the bench's own temp dir, never a user's.
 */
export function withStateDb(stateDir, read) {
  const file = path.join(stateDir, STATE_DB_FILE);
  if (!exists(file)) return undefined;
  const Sqlite = loadSqlite();
  const db = new Sqlite(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function countIn(file, needle) {
  let text;
  try {
    text = readFileSync(file);
  } catch {
    return 0;
  }
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

/**
 * System events a stopped gateway recorded: still queued (`queue`) or already moved to the main transcript by a
 * heartbeat (`transcript`, kind `system-event`). Every accepted wake, direct or mapped, is one; a replayed
 * delivery is none. A build from before the database: the same count in queue.jsonl and transcript.jsonl.
 */
export function countWakes(stateDir) {
  const counted = withStateDb(
    stateDir,
    (db) =>
      db.prepare("SELECT count(*) FROM queue").pluck().get() +
      db.prepare("SELECT count(*) FROM transcript WHERE kind = 'system-event'").pluck().get(),
  );
  if (counted !== undefined) return counted;
  const needle = Buffer.from('"kind":"system-event"');
  return (
    countIn(path.join(stateDir, "queue.jsonl"), needle) +
    countIn(path.join(stateDir, "transcript.jsonl"), needle)
  );
}

/** Session keys with messages (each bare /agent request is a `hook:<uuid>` session of its own). */
export function countSessions(stateDir) {
  const counted = withStateDb(stateDir, (db) =>
    db.prepare("SELECT count(DISTINCT session_key) FROM messages").pluck().get(),
  );
  if (counted !== undefined) return counted;
  // A build from before the database: one file per session under sessions/.
  try {
    return readdirSync(path.join(stateDir, "sessions")).length;
  } catch {
    return 0;
  }
}

/** Bytes (apparent size) of every file below `dir`, recursively; 0 when it does not exist. */
export function treeBytes(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    try {
      if (entry.isDirectory()) total += treeBytes(full);
      else if (entry.isFile()) total += statSync(full).size;
    } catch {
      // Removed between the listing and the stat (a segment retention deleted, a rotated log).
    }
  }
  return total;
}

/** Files directly in `dir` whose name starts with `prefix`, their bytes summed; 0 when none. */
export function filesBytes(dir, prefix) {
  let total = 0;
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    try {
      total += statSync(path.join(dir, name)).size;
    } catch {
      // Gone meanwhile (rotated).
    }
  }
  return total;
}

/** What a gateway's state directory holds: the journal's segments, state.sqlite with its -wal and -shm. */
export function stateSizes(stateDir) {
  return {
    journalBytes: treeBytes(path.join(stateDir, JOURNAL_DIR)),
    databaseBytes: filesBytes(stateDir, STATE_DB_FILE),
  };
}

/** @module The reference gateway's state database: opens `<stateDir>/state.sqlite`, checks or creates its tables, and hands its writes to a write queue. */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { loadSqlite, type SqliteDatabase } from "./sqlite.js";
import { SETTING, STATE_SCHEMA, STATE_SCHEMA_VERSION, STATE_UPGRADES } from "./state-schema.js";
import {
  createStateWriteQueue,
  type StateWriteQueue,
  type StateWriteQueueOptions,
} from "./state-write-queue.js";

export const STATE_DB_FILE = "state.sqlite";
/** Relative to the working directory, for `hooks serve` and `hooks state` alike. */
export const DEFAULT_STATE_DIR = ".hooks-state";

/**
 * After a checkpoint SQLite cuts the write-ahead log back to this size; without a limit a burst leaves the -wal
 * file at its largest size for good (it is reused, never shrunk).
 */
const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

/** An open state database: the handle for reads, and its write queue for everything that changes it. */
export interface StateDb extends StateWriteQueue {
  readonly file: string;
  readonly db: SqliteDatabase;
  /** True when this open created the tables (a new state directory, or one from before the database). */
  readonly created: boolean;
  /**
   * When this file was created (epoch ms), kept in its settings; undefined for a file from before that was kept.
   * What happened before it (requests of a file moved away) cannot be in it.
   */
  readonly createdAt: number | undefined;
  /** Commits what is queued (one last try for kept writes) and closes the file; later writes are ignored. */
  close(): void;
}

/** Everything an open takes is for its writes. */
export type StateDbOptions = StateWriteQueueOptions;

/** The state directory is private to its user (0700), and so is the database (0600): it holds payload text. */
function createPrivateFile(stateDir: string, file: string): boolean {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const exists = existsSync(file);
  if (!exists) closeSync(openSync(file, "a", 0o600));
  // SQLite gives the -wal and -shm files the mode of the database file.
  chmodSync(file, 0o600);
  return !exists;
}

function tableCount(db: SqliteDatabase): number {
  return db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get() as number;
}

/**
 * Creates the tables of a new file, or checks that an existing one is ours, upgrading an older version. `createdAt`
 * is written with the tables, in their transaction, when there was no file before: a crash cannot leave the tables
 * without it.
 */
function prepareSchema(db: SqliteDatabase, file: string, createdAt: number | undefined): boolean {
  let version = db.pragma("user_version", { simple: true }) as number;
  if (version > 0 && version < STATE_SCHEMA_VERSION && STATE_UPGRADES[version] !== undefined) {
    db.transaction(() => {
      for (; version < STATE_SCHEMA_VERSION; version++) db.exec(STATE_UPGRADES[version]!);
      db.pragma(`user_version = ${STATE_SCHEMA_VERSION}`);
    })();
  }
  if (version === STATE_SCHEMA_VERSION) return false;
  if (version !== 0 || tableCount(db) > 0) {
    throw new Error(
      `${file} is not a state database of this hooks version (schema ${version}, expected ${STATE_SCHEMA_VERSION}); move it away to start with a fresh one`,
    );
  }
  // Only possible before the first table exists: with it, deleted rows' pages can later be handed back to the
  // file system by `PRAGMA incremental_vacuum` (retention does), so the file does not only grow.
  db.pragma("auto_vacuum = INCREMENTAL");
  db.transaction(() => {
    db.exec(STATE_SCHEMA);
    if (createdAt !== undefined) {
      db.prepare("INSERT INTO settings (key, value) VALUES (?, ?)").run(SETTING.createdAt, String(createdAt));
    }
    db.pragma(`user_version = ${STATE_SCHEMA_VERSION}`);
  })();
  return true;
}

function readCreatedAt(db: SqliteDatabase): number | undefined {
  const value = db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(SETTING.createdAt);
  const at = typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(at) ? at : undefined;
}

/** What to do about a state database that cannot be used, said with every refusal. */
function damagedAdvice(file: string): string {
  return `restore it from a backup, or move ${path.basename(file)} (with its -wal and -shm files) out of ${path.dirname(file)}: the next start rebuilds it from what the journal holds`;
}

/**
 * A damaged file must stop the gateway at start: SQLite reads pages only when a query needs them, so a file with a
 * damaged table opens, answers requests with 200 and then fails every write. `quick_check` reads every page once
 * (about 0.3 s for a 260 MB file, measured): it grows with the database, which retention bounds, not with uptime.
 */
function checkWhole(db: SqliteDatabase, file: string): void {
  let problems: string[];
  try {
    problems = (db.pragma("quick_check(5)") as Array<{ quick_check: string }>).map((row) => row.quick_check);
  } catch (error) {
    throw new Error(`${file} is damaged (${(error as Error).message}): ${damagedAdvice(file)}`, {
      cause: error,
    });
  }
  if (problems.length === 1 && problems[0] === "ok") return;
  throw new Error(
    `${file} is damaged (${problems.join("; ").replace(/\s+/g, " ").slice(0, 300)}): ${damagedAdvice(file)}`,
  );
}

/** Opens (creating when needed) the state database of `stateDir`; throws when better-sqlite3 cannot be loaded. */
export function openStateDb(stateDir: string, options: StateDbOptions = {}): StateDb {
  const file = path.join(stateDir, STATE_DB_FILE);
  const Database = loadSqlite();
  // An existing empty file is not new: it may be a state that was emptied, and gets no creation time.
  const createdFile = createPrivateFile(stateDir, file);
  const db = new Database(file);
  let created: boolean;
  let createdAt: number | undefined;
  try {
    if (!createdFile) checkWhole(db, file);
    // Before switching to WAL: on a new file in WAL mode, setting auto_vacuum has no effect.
    created = prepareSchema(db, file, createdFile ? Date.now() : undefined);
    createdAt = readCreatedAt(db);
    db.pragma("journal_mode = WAL");
    // NORMAL, not FULL: in WAL mode a commit is then not fsynced, only checkpoints are. A crash of the process
    // loses nothing (the commit is in the -wal file, which the OS has); a power cut may lose the last moments.
    // That is enough here: a request's durability is the plugin's journal's job, which re-emits what it is not
    // sure was handed over, and this database drops those repeats by id.
    db.pragma("synchronous = NORMAL");
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  } catch (error) {
    db.close();
    throw error;
  }

  const queue = createStateWriteQueue(db, file, options);
  // Spelled out rather than spread: a spread would read `retained` once instead of keeping its getter.
  return {
    file,
    db,
    created,
    createdAt,
    get retained() {
      return queue.retained;
    },
    get commits() {
      return queue.commits;
    },
    write: queue.write,
    flush: queue.flush,
    transact: queue.transact,
    reportError: queue.reportError,
    onFlush: queue.onFlush,
    committed: queue.committed,
    stored: queue.stored,
    close() {
      queue.close();
      if (db.open) db.close();
    },
  };
}

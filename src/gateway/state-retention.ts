/** @module Retention of the state database: deletes transcript, outbox and message rows older than `state.retainDays`, in chunks. */
import type { HostLogger } from "../host/contract.js";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.js";
import type { StateDb } from "./state-db.js";

export const RETENTION_EVERY_MS = 60 * 60 * 1000;
/** Rows deleted per statement; the event loop runs between chunks, so a first purge of millions does not stall requests. */
export const PURGE_CHUNK_ROWS = 2_000;
/** Free pages handed back to the file system per step of the incremental vacuum. */
const VACUUM_CHUNK_PAGES = 1_024;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The purged tables; the queue is not among them: it is work not yet delivered. */
const PURGED = ["transcript", "outbox", "messages"] as const;
type PurgedTable = (typeof PURGED)[number];

export type PurgeResult = Record<PurgedTable, number>;

export interface Retention {
  /** The purge under way, or a new one; resolves with the rows it deleted per table. Never rejects. */
  run(): Promise<PurgeResult>;
  /** Stops the hourly timer; a purge under way stops after its current chunk. */
  stop(): Promise<void>;
}

export interface RetentionOptions {
  retainDays: number;
  logger: Pick<HostLogger, "info">;
  now?: () => number;
  everyMs?: number;
  chunkRows?: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Deletes = Record<PurgedTable, SqliteStatement<[number, number]>>;

/** Through the `at` index, a chunk at a time: SQLite's DELETE ... LIMIT is a compile-time option, this is not. */
function prepareDeletes(db: SqliteDatabase): Deletes {
  return Object.fromEntries(
    PURGED.map((table) => [
      table,
      db.prepare<[number, number]>(
        `DELETE FROM ${table} WHERE seq IN (SELECT seq FROM ${table} WHERE at < ? LIMIT ?)`,
      ),
    ]),
  ) as Deletes;
}

/**
 * Deleted rows leave free pages that SQLite reuses but never gives back, so after a large purge the file would
 * keep its largest size; with `auto_vacuum = INCREMENTAL` the incremental vacuum returns them. The write-ahead
 * log grows to hold the biggest burst between checkpoints; a TRUNCATE checkpoint moves it into the database and
 * empties it.
 */
async function compact(db: SqliteDatabase, stopped: () => boolean): Promise<void> {
  while (!stopped() && (db.pragma("freelist_count", { simple: true }) as number) > 0) {
    db.pragma(`incremental_vacuum(${VACUUM_CHUNK_PAGES})`);
    await nextTurn();
  }
  if (stopped()) return;
  // A TRUNCATE checkpoint waits for readers (`hooks state`) through the busy timeout; it must not stall the
  // gateway for that long. Busy, it simply leaves the log for the next hour.
  const timeout = db.pragma("busy_timeout", { simple: true }) as number;
  db.pragma("busy_timeout = 0");
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

/** What one purge works with; `stopped` says when the retention was stopped meanwhile. */
interface PurgeJob {
  state: StateDb;
  deletes: Deletes;
  options: RetentionOptions;
  stopped: () => boolean;
}

/**
 * Deletes the rows older than `cutoff`, table by table, a chunk per event-loop turn, counting them in `deleted`;
 * false when the retention was stopped on the way.
 */
async function deleteOlderRows(job: PurgeJob, cutoff: number, deleted: PurgeResult): Promise<boolean> {
  const chunkRows = job.options.chunkRows ?? PURGE_CHUNK_ROWS;
  for (const table of PURGED) {
    for (;;) {
      if (job.stopped()) return false;
      const changes = job.deletes[table].run(cutoff, chunkRows).changes;
      deleted[table] += changes;
      if (changes < chunkRows) break;
      await nextTurn();
    }
  }
  return true;
}

/** One purge, then the file compacted; logged when it deleted rows, unless stopped on the way. */
async function purge(job: PurgeJob): Promise<PurgeResult> {
  const { options } = job;
  const deleted: PurgeResult = { transcript: 0, outbox: 0, messages: 0 };
  const now = options.now ?? Date.now;
  const cutoff = now() - options.retainDays * DAY_MS;
  try {
    if (!(await deleteOlderRows(job, cutoff, deleted))) return deleted;
    await compact(job.state.db, job.stopped);
  } catch (error) {
    job.state.reportError(error);
  }
  if (deleted.transcript + deleted.outbox + deleted.messages > 0) {
    options.logger.info("state retention: deleted rows older than retainDays", {
      retainDays: options.retainDays,
      ...deleted,
    });
  }
  return deleted;
}

/** Runs a purge now (at start) and then every hour, with its timer unref'd. */
export function startRetention(state: StateDb, options: RetentionOptions): Retention {
  let stopped = false;
  let current: Promise<PurgeResult> | undefined;
  const job: PurgeJob = { state, deletes: prepareDeletes(state.db), options, stopped: () => stopped };

  const run = (): Promise<PurgeResult> => {
    current ??= purge(job).finally(() => {
      current = undefined;
    });
    return current;
  };

  // Hourly, or four times per retention period when that is shorter (a retention of minutes, in a test).
  const everyMs = options.everyMs ?? Math.min(RETENTION_EVERY_MS, (options.retainDays * DAY_MS) / 4);
  const timer = setInterval(() => void run(), everyMs);
  // Timers alone never keep a gateway alive; the server does.
  timer.unref();
  void run();

  return {
    run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

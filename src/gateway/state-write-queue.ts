/** @module The state database's writes: queued per event-loop turn, committed together, kept and retried when a commit fails for a passing reason. */
import type { SqliteDatabase } from "./sqlite.js";
import { WalSync } from "./state-wal-sync.js";
import { reportOncePerFailure, reportOnStderr, type WriteErrorHandler } from "./write-errors.js";

/**
 * Everything that writes to an open state database goes through this: one transaction per event-loop turn is what
 * keeps inserts cheap, and one place that knows which writes are still uncommitted is what lets a full disk recover
 * without a restart and lets callers wait until their writes are on disk.
 */
export interface StateWriteQueue {
  /** Queues a write for the transaction that commits at the end of this event-loop turn. */
  write(op: () => void): void;
  /**
   * Commits the queued writes now; false when they failed (reported) or earlier failed writes are still waiting.
   * Writes that failed for a passing reason (a full disk, a busy file) are kept and tried again on a back-off timer,
   * with everything written since, until they commit; any other failure gives up the failing writes at once.
   */
  flush(): boolean;
  /** Writes kept after a failed commit, waiting for the next try (0 when the database takes writes). */
  readonly retained: number;
  /**
   * Commits the queued writes, then runs `op` in a transaction of its own; false when it failed (reported, rolled
   * back), or when the writes before it could not be committed (it would read a state without them).
   */
  transact(op: () => void): boolean;
  /** Reports a failed state write the way the store does (once per error code until a write succeeds). */
  reportError(error: unknown): void;
  /**
   * Called once nothing written is waiting any more (committed, or given up): owners of "written but not yet
   * committed" sets clear them. Not called while failed writes are kept for another try.
   */
  onFlush(listener: () => void): void;
  /**
   * Resolves once every write queued so far is committed and on disk (the WAL synced, off the main thread, one sync
   * shared by everyone waiting). A commit that fails for a passing reason is tried again, and this waits for it; it
   * rejects when the writes were given up (they failed for good, too many were kept, or the database closed) or the
   * sync failed. The first call after writes were given up rejects too: its caller may have queued them.
   */
  committed(): Promise<void>;
  /** Commits what is queued (one last try for kept writes); later writes are ignored. Leaves the database open. */
  close(): void;
}

export interface StateWriteQueueOptions {
  /** Told when a write fails (a full disk, say); the gateway keeps going. Default: a line on stderr. */
  onError?: WriteErrorHandler;
  /** Told when kept writes are given up (more than RETRY_MAX_WRITES); the plugin's journal finishes them at the next start. */
  onGiveUp?: (writes: number) => void;
  /** Delays of the retry timer after a failed commit: the first, and the most it doubles to. */
  retryMs?: { first: number; max: number };
}

/**
 * A failed commit (a full disk) is tried again after RETRY_FIRST_MS, doubling to RETRY_MAX_MS: a disk that has room
 * again takes the kept writes within seconds, without a restart and without a busy loop while it stays full.
 */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
/**
 * The most writes kept for another try. Beyond it the oldest are given up (their requests stay unfinished in the
 * journal, which hands them over again at the next start): memory stays bounded if the database never recovers.
 */
const RETRY_MAX_WRITES = 100_000;

/**
 * Failures that may pass: the disk gets room again, another process lets go of a lock. Anything else (a constraint,
 * a bug in one write, a damaged page) fails the same way on every try, and kept it would hold back every write
 * queued behind it.
 */
const PASSING_CODES = /^(SQLITE_FULL|SQLITE_IOERR|SQLITE_BUSY|SQLITE_LOCKED|ENOSPC|EDQUOT)(_|$)/;

function mayPass(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && PASSING_CODES.test(code);
}

/** Writes of one flush and the callers waiting for them. */
interface Batch {
  ops: Array<() => void>;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

/** Starts taking writes for `db`, an open state database at `file` (named in reports and errors). */
export function createStateWriteQueue(
  db: SqliteDatabase,
  file: string,
  options: StateWriteQueueOptions = {},
): StateWriteQueue {
  const report = reportOncePerFailure(options.onError ?? reportOnStderr);
  const retryFirstMs = options.retryMs?.first ?? RETRY_FIRST_MS;
  const retryMaxMs = options.retryMs?.max ?? RETRY_MAX_MS;
  const flushListeners: Array<() => void> = [];
  // Waiting for the commit of what is queued now: told once that commit succeeded or was given up.
  let commitWaiters: Batch["waiters"] = [];
  let queued: Array<() => void> = [];
  // Batches whose commit failed, oldest first: tried again by the retry timer until they commit.
  let kept: Batch[] = [];
  let keptOps = 0;
  let scheduled: NodeJS.Immediate | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryDelayMs = retryFirstMs;
  let closed = false;
  // Counts give-ups; committed() tells its first caller after one that writes were lost (see there).
  let giveUps = 0;
  let giveUpsSeen = 0;
  let lastLoss: unknown;
  const walSync = new WalSync(`${file}-wal`);
  const commit = db.transaction((batches: readonly Batch[]) => {
    for (const batch of batches) for (const op of batch.ops) op();
  });

  const lose = (error: unknown) => {
    giveUps++;
    lastLoss = error;
  };

  const rejectAll = (batch: Batch, error: unknown) => {
    for (const waiter of batch.waiters) waiter.reject(error);
    batch.waiters = [];
  };

  const settled = () => {
    for (const listener of flushListeners) listener();
  };

  /** Drops the oldest kept batches beyond RETRY_MAX_WRITES; their waiters are told the writes are lost. */
  const giveUp = (batches: Batch[], error: unknown) => {
    let writes = 0;
    for (const batch of batches) {
      writes += batch.ops.length;
      for (const waiter of batch.waiters) waiter.reject(error);
    }
    if (writes === 0) return;
    lose(error);
    options.onGiveUp?.(writes);
  };

  const scheduleRetry = () => {
    if (retryTimer !== undefined || closed) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      commitNow();
    }, retryDelayMs);
    // A kept write never keeps a stopping gateway alive: close() makes its last try.
    retryTimer.unref();
    retryDelayMs = Math.min(retryDelayMs * 2, retryMaxMs);
  };

  const takeQueued = (): Batch => {
    const batch: Batch = { ops: queued, waiters: commitWaiters };
    queued = [];
    commitWaiters = [];
    return batch;
  };

  /** Gives up the oldest kept batches beyond RETRY_MAX_WRITES (the newest is always kept). */
  const bound = (error: unknown) => {
    let drop = 0;
    while (keptOps > RETRY_MAX_WRITES && drop < kept.length - 1) keptOps -= kept[drop++]!.ops.length;
    if (drop > 0) giveUp(kept.splice(0, drop), error);
  };

  /**
   * While writes are kept, only the retry timer (and close) tries again: a commit per event-loop turn of everything
   * kept would spin on a disk that stays full. New writes are kept too, each turn's as a batch of its own, so a write
   * that fails for good takes only its turn's writes with it.
   */
  const flush = (): boolean => {
    if (scheduled !== undefined) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    if (kept.length === 0 || closed) return commitNow();
    const batch = takeQueued();
    if (batch.ops.length > 0 || batch.waiters.length > 0) {
      kept.push(batch);
      keptOps += batch.ops.length;
      bound(new Error(`${file}: more than ${RETRY_MAX_WRITES} writes waiting for another try`));
    }
    return false;
  };

  /** The commit's error, or undefined when it committed. */
  const tryCommit = (batches: readonly Batch[]): unknown => {
    try {
      // One transaction for everything one turn wrote: a commit per insert measured ~75 µs against ~9 µs per
      // insert in a shared transaction (WAL, synchronous NORMAL), a large share of a core at thousands a second.
      commit(batches);
      return undefined;
    } catch (error) {
      return error ?? new Error("state write failed");
    }
  };

  /** Kept, in order, for the next try: a full disk that gets room again takes them without a restart. */
  const keep = (batches: Batch[], error: unknown) => {
    report.failed(error, file);
    kept = batches;
    keptOps = batches.reduce((sum, batch) => sum + batch.ops.length, 0);
    bound(error);
    scheduleRetry();
  };

  const nothingKept = () => {
    kept = [];
    keptOps = 0;
    retryDelayMs = retryFirstMs;
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    retryTimer = undefined;
  };

  /**
   * After a failure that another try would meet again: each batch in a transaction of its own, so the failing ones
   * are given up and the others commit. A waiter of a batch after a given-up one was told "everything queued so far",
   * which includes the lost writes: it is told they failed, and its requests stay unfinished in the journal, which
   * hands them over again at the next start (the database drops the repeats by id).
   */
  const commitEach = (batches: Batch[]): boolean => {
    let lost: unknown;
    for (const [index, batch] of batches.entries()) {
      const error = tryCommit([batch]);
      if (error === undefined) {
        report.succeeded();
        if (lost === undefined) for (const waiter of batch.waiters) waiter.resolve();
        else rejectAll(batch, lost);
        continue;
      }
      if (mayPass(error)) {
        if (lost !== undefined) for (const later of batches.slice(index)) rejectAll(later, lost);
        keep(batches.slice(index), error);
        return false;
      }
      // Said as an error line (onError): the gateway keeps running without these writes.
      report.failed(error, file);
      lost = error;
      if (batch.ops.length > 0) lose(error);
      rejectAll(batch, error);
    }
    nothingKept();
    settled();
    return lost === undefined;
  };

  const commitNow = (): boolean => {
    const batch = takeQueued();
    if ((batch.ops.length === 0 && kept.length === 0) || closed) {
      for (const waiter of batch.waiters) waiter.resolve();
      return true;
    }
    const batches = kept.length === 0 ? [batch] : [...kept, batch];
    const error = tryCommit(batches);
    if (error !== undefined) {
      if (!mayPass(error)) return commitEach(batches);
      keep(batches, error);
      return false;
    }
    nothingKept();
    report.succeeded();
    for (const done of batches) for (const waiter of done.waiters) waiter.resolve();
    settled();
    return true;
  };

  return {
    get retained() {
      return keptOps;
    },
    write(op) {
      if (closed) return;
      queued.push(op);
      scheduled ??= setImmediate(flush);
    },
    flush,
    transact(op) {
      if (closed) return false;
      // Writes given up for good do not hold it back: only kept ones, which it would read a state without.
      if (!flush() && kept.length > 0) return false;
      try {
        db.transaction(op)();
        report.succeeded();
        return true;
      } catch (error) {
        report.failed(error, file);
        return false;
      }
    },
    reportError: (error) => report.failed(error, file),
    onFlush: (listener) => void flushListeners.push(listener),
    committed() {
      // Writes given up since the previous call may have been queued before this one by this caller (the journal
      // asks again for records whose writes were already queued): "all stored" would be a lie, so it is told no.
      if (giveUps !== giveUpsSeen) {
        giveUpsSeen = giveUps;
        return Promise.reject(lastLoss);
      }
      const commit =
        (queued.length === 0 && kept.length === 0) || closed
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => commitWaiters.push({ resolve, reject }));
      return commit.then(() => walSync.sync());
    },
    close() {
      if (closed) return;
      commitNow();
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      retryTimer = undefined;
      if (kept.length > 0) {
        giveUp(kept, new Error(`${file}: writes not committed before the gateway stopped`));
        kept = [];
        keptOps = 0;
        settled();
      }
      walSync.close();
    },
  };
}

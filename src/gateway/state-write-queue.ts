/** @module The state database's writes: queued per event-loop turn, committed together, kept and retried when a commit fails for a passing reason. */
import type { SqliteDatabase } from "./sqlite.js";
import { WalSync } from "./state-wal-sync.js";
import {
  type Batch,
  KeptBatches,
  mayPass,
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  RETRY_MAX_WRITES,
  RetryBackoff,
} from "./state-write-retry.js";
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
  /**
   * Resolves once every write queued so far is committed, not yet synced (what a process crash keeps; a power cut
   * may lose the last moments): the journal rebuilds those from the moment the sync mark keeps. Rejects as
   * `committed()` does.
   */
  stored(): Promise<void>;
  /** Transactions committed since the database opened. */
  readonly commits: number;
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

type Waiter = Batch["waiters"][number];

/** Tells every waiter of `batch` that its writes failed, once. */
function rejectAll(batch: Batch, error: unknown): void {
  for (const waiter of batch.waiters) waiter.reject(error);
  batch.waiters = [];
}

function resolveAll(batches: readonly Batch[]): void {
  for (const batch of batches) for (const waiter of batch.waiters) waiter.resolve();
}

/** The writes of one open database: what is queued, what is kept after a failed commit, and who waits for them. */
class WriteQueue {
  private readonly report: ReturnType<typeof reportOncePerFailure>;
  private readonly flushListeners: Array<() => void> = [];
  // Waiting for the commit of what is queued now: told once that commit succeeded or was given up.
  private commitWaiters: Waiter[] = [];
  private queued: Array<() => void> = [];
  // Batches whose commit failed, oldest first: tried again by the retry timer until they commit.
  private readonly kept = new KeptBatches();
  private readonly retry: RetryBackoff;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  // Counts give-ups; committed() tells its first caller after one that writes were lost (see there).
  private giveUps = 0;
  private giveUpsSeen = 0;
  private lastLoss: unknown;
  private readonly walSync: WalSync;
  private readonly commit: (batches: readonly Batch[]) => void;
  /** Transactions committed since the database opened (the sync mark looks for new ones). */
  commitCount = 0;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly file: string,
    private readonly options: StateWriteQueueOptions,
  ) {
    this.report = reportOncePerFailure(options.onError ?? reportOnStderr);
    this.retry = new RetryBackoff(
      options.retryMs?.first ?? RETRY_FIRST_MS,
      options.retryMs?.max ?? RETRY_MAX_MS,
    );
    this.walSync = new WalSync(`${file}-wal`);
    this.commit = db.transaction((batches: readonly Batch[]) => {
      for (const batch of batches) for (const op of batch.ops) op();
    });
  }

  get retained(): number {
    return this.kept.ops;
  }

  write(op: () => void): void {
    if (this.closed) return;
    this.queued.push(op);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /**
   * While writes are kept, only the retry timer (and close) tries again: a commit per event-loop turn of everything
   * kept would spin on a disk that stays full. New writes are kept too, each turn's as a batch of its own, so a write
   * that fails for good takes only its turn's writes with it.
   */
  flush(): boolean {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    if (this.kept.batches.length === 0 || this.closed) return this.commitNow();
    const batch = this.takeQueued();
    if (batch.ops.length > 0 || batch.waiters.length > 0) {
      this.kept.add(batch);
      this.bound(new Error(`${this.file}: more than ${RETRY_MAX_WRITES} writes waiting for another try`));
    }
    return false;
  }

  transact(op: () => void): boolean {
    if (this.closed) return false;
    // Writes given up for good do not hold it back: only kept ones, which it would read a state without.
    if (!this.flush() && this.kept.batches.length > 0) return false;
    try {
      this.db.transaction(op)();
      this.report.succeeded();
      return true;
    } catch (error) {
      this.report.failed(error, this.file);
      return false;
    }
  }

  reportError(error: unknown): void {
    this.report.failed(error, this.file);
  }

  onFlush(listener: () => void): void {
    this.flushListeners.push(listener);
  }

  stored(): Promise<void> {
    // Writes given up since the previous call may have been queued before this one by this caller (the journal
    // asks again for records whose writes were already queued): "all stored" would be a lie, so it is told no.
    if (this.giveUps !== this.giveUpsSeen) {
      this.giveUpsSeen = this.giveUps;
      return Promise.reject(this.lastLoss);
    }
    const commit =
      (this.queued.length === 0 && this.kept.batches.length === 0) || this.closed
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => this.commitWaiters.push({ resolve, reject }));
    return commit;
  }

  committed(): Promise<void> {
    return this.stored().then(() => this.walSync.sync());
  }

  close(): void {
    if (this.closed) return;
    this.commitNow();
    this.closed = true;
    this.retry.cancel();
    if (this.kept.batches.length > 0) {
      this.giveUp(
        this.kept.batches,
        new Error(`${this.file}: writes not committed before the gateway stopped`),
      );
      this.kept.clear();
      this.settled();
    }
    this.walSync.close();
  }

  private lose(error: unknown): void {
    this.giveUps++;
    this.lastLoss = error;
  }

  private settled(): void {
    for (const listener of this.flushListeners) listener();
  }

  /** Gives up `batches`: their waiters are told the writes are lost, and so is onGiveUp when there were any. */
  private giveUp(batches: readonly Batch[], error: unknown): void {
    let writes = 0;
    for (const batch of batches) {
      writes += batch.ops.length;
      for (const waiter of batch.waiters) waiter.reject(error);
    }
    if (writes === 0) return;
    this.lose(error);
    this.options.onGiveUp?.(writes);
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    this.retry.schedule(() => this.commitNow());
  }

  private takeQueued(): Batch {
    const batch: Batch = { ops: this.queued, waiters: this.commitWaiters };
    this.queued = [];
    this.commitWaiters = [];
    return batch;
  }

  /** Gives up the oldest kept batches beyond RETRY_MAX_WRITES (the newest is always kept). */
  private bound(error: unknown): void {
    this.giveUp(this.kept.trimTo(RETRY_MAX_WRITES), error);
  }

  /** The commit's error, or undefined when it committed. */
  private tryCommit(batches: readonly Batch[]): unknown {
    try {
      // One transaction for everything one turn wrote: a commit per insert measured ~75 µs against ~9 µs per
      // insert in a shared transaction (WAL, synchronous NORMAL), a large share of a core at thousands a second.
      this.commit(batches);
      this.commitCount++;
      return undefined;
    } catch (error) {
      return error ?? new Error("state write failed");
    }
  }

  /** Kept, in order, for the next try: a full disk that gets room again takes them without a restart. */
  private keep(batches: Batch[], error: unknown): void {
    this.report.failed(error, this.file);
    this.kept.replace(batches);
    this.bound(error);
    this.scheduleRetry();
  }

  private nothingKept(): void {
    this.kept.clear();
    this.retry.reset();
  }

  /**
   * After a failure that another try would meet again: each batch in a transaction of its own, so the failing ones
   * are given up and the others commit. A waiter of a batch after a given-up one was told "everything queued so far",
   * which includes the lost writes: it is told they failed, and its requests stay unfinished in the journal, which
   * hands them over again at the next start (the database drops the repeats by id).
   */
  private commitEach(batches: Batch[]): boolean {
    let lost: unknown;
    for (const [index, batch] of batches.entries()) {
      const error = this.tryCommit([batch]);
      if (error === undefined) {
        this.report.succeeded();
        if (lost === undefined) resolveAll([batch]);
        else rejectAll(batch, lost);
        continue;
      }
      if (mayPass(error)) {
        if (lost !== undefined) for (const later of batches.slice(index)) rejectAll(later, lost);
        this.keep(batches.slice(index), error);
        return false;
      }
      // Said as an error line (onError): the gateway keeps running without these writes.
      this.report.failed(error, this.file);
      lost = error;
      if (batch.ops.length > 0) this.lose(error);
      rejectAll(batch, error);
    }
    this.nothingKept();
    this.settled();
    return lost === undefined;
  }

  private commitNow(): boolean {
    const batch = this.takeQueued();
    if ((batch.ops.length === 0 && this.kept.batches.length === 0) || this.closed) {
      resolveAll([batch]);
      return true;
    }
    const batches = this.kept.batches.length === 0 ? [batch] : [...this.kept.batches, batch];
    const error = this.tryCommit(batches);
    if (error !== undefined) {
      if (!mayPass(error)) return this.commitEach(batches);
      this.keep(batches, error);
      return false;
    }
    this.nothingKept();
    this.report.succeeded();
    resolveAll(batches);
    this.settled();
    return true;
  }
}

/** Starts taking writes for `db`, an open state database at `file` (named in reports and errors). */
export function createStateWriteQueue(
  db: SqliteDatabase,
  file: string,
  options: StateWriteQueueOptions = {},
): StateWriteQueue {
  const queue = new WriteQueue(db, file, options);
  // Each method stands on its own: the state database hands them on as they are, without the queue.
  return {
    get retained() {
      return queue.retained;
    },
    get commits() {
      return queue.commitCount;
    },
    write: (op) => queue.write(op),
    flush: () => queue.flush(),
    transact: (op) => queue.transact(op),
    reportError: (error) => queue.reportError(error),
    onFlush: (listener) => queue.onFlush(listener),
    committed: () => queue.committed(),
    stored: () => queue.stored(),
    close: () => queue.close(),
  };
}

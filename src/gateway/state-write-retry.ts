/** @module State writes kept after a failed commit: which failures may pass, the kept batches (bounded) and the back-off timer that tries them again. */

/** Writes of one flush and the callers waiting for them. */
export interface Batch {
  ops: Array<() => void>;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

/**
 * A failed commit (a full disk) is tried again after RETRY_FIRST_MS, doubling to RETRY_MAX_MS: a disk that has room
 * again takes the kept writes within seconds, without a restart and without a busy loop while it stays full.
 */
export const RETRY_FIRST_MS = 100;
export const RETRY_MAX_MS = 5_000;
/**
 * The most writes kept for another try. Beyond it the oldest are given up (their requests stay unfinished in the
 * journal, which hands them over again at the next start): memory stays bounded if the database never recovers.
 */
export const RETRY_MAX_WRITES = 100_000;

/**
 * Failures that may pass: the disk gets room again, another process lets go of a lock. Anything else (a constraint,
 * a bug in one write, a damaged page) fails the same way on every try, and kept it would hold back every write
 * queued behind it.
 */
const PASSING_CODES = /^(SQLITE_FULL|SQLITE_IOERR|SQLITE_BUSY|SQLITE_LOCKED|ENOSPC|EDQUOT)(_|$)/;

export function mayPass(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && PASSING_CODES.test(code);
}

/** Batches whose commit failed, oldest first, and how many writes they hold together. */
export class KeptBatches {
  private list: Batch[] = [];
  private count = 0;

  get batches(): readonly Batch[] {
    return this.list;
  }

  /** Writes in the kept batches. */
  get ops(): number {
    return this.count;
  }

  add(batch: Batch): void {
    this.list.push(batch);
    this.count += batch.ops.length;
  }

  replace(batches: Batch[]): void {
    this.list = batches;
    this.count = batches.reduce((sum, batch) => sum + batch.ops.length, 0);
  }

  clear(): void {
    this.list = [];
    this.count = 0;
  }

  /** Takes out (and returns) the oldest batches beyond `maxOps` writes; the newest is always kept. */
  trimTo(maxOps: number): Batch[] {
    let drop = 0;
    while (this.count > maxOps && drop < this.list.length - 1) this.count -= this.list[drop++]!.ops.length;
    return this.list.splice(0, drop);
  }
}

/** The timer that tries kept writes again: its delay doubles from `firstMs` to `maxMs` while they keep failing. */
export class RetryBackoff {
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;

  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
  ) {
    this.delayMs = firstMs;
  }

  /** Runs `retry` after the current delay, unless a try is already scheduled; the next delay is twice as long. */
  schedule(retry: () => void): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      retry();
    }, this.delayMs);
    // A kept write never keeps a stopping gateway alive: close() makes its last try.
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, this.maxMs);
  }

  /** Cancels the scheduled try, if any. */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Cancels the scheduled try; the next failure starts again from the first delay. */
  reset(): void {
    this.delayMs = this.firstMs;
    this.cancel();
  }
}

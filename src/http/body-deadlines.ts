/** @module One timer for every body being read: a timer per request was a measurable share of a small request. */

export interface WatchedBody {
  readonly deadline: number;
  readonly expire: () => void;
}

/** Checks run this many times per timeout, so a body is cut at most an eighth of the timeout late. */
const CHECKS_PER_TIMEOUT = 8;
const MIN_CHECK_MS = 5;
const MAX_CHECK_MS = 1_000;

export class BodyDeadlines {
  private readonly watched = new Set<WatchedBody>();
  private timer: NodeJS.Timeout | undefined;
  private readonly checkEveryMs: number;

  constructor(
    readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.checkEveryMs = Math.min(
      MAX_CHECK_MS,
      Math.max(MIN_CHECK_MS, Math.floor(timeoutMs / CHECKS_PER_TIMEOUT)),
    );
  }

  /** Calls `expire` once the timeout has passed, unless `release` comes first. */
  watch(expire: () => void): WatchedBody {
    const entry = { deadline: this.now() + this.timeoutMs, expire };
    this.watched.add(entry);
    // The interval keeps running while bodies are read and stops on the first check that finds none.
    if (this.timer === undefined) {
      this.timer = setInterval(this.check, this.checkEveryMs);
      this.timer.unref();
    }
    return entry;
  }

  release(entry: WatchedBody): void {
    this.watched.delete(entry);
  }

  get size(): number {
    return this.watched.size;
  }

  private readonly check = (): void => {
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = this.now();
    for (const entry of this.watched) {
      if (entry.deadline > now) continue;
      this.watched.delete(entry);
      entry.expire();
    }
  };
}

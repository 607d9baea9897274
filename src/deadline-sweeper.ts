/**
 * @module Many deadlines on one timer: a timer per request (a body being read, an agent run being waited on)
 * was a measurable share of a small request.
 */

export interface WatchedDeadline {
  readonly deadline: number;
  readonly expire: () => void;
}

function reportExpireError(error: unknown): void {
  process.emitWarning(`a deadline callback failed: ${(error as Error)?.message ?? String(error)}`);
}

export class DeadlineSweeper {
  private readonly watched = new Set<WatchedDeadline>();
  private timer: NodeJS.Timeout | undefined;

  /** A deadline fires at most `checkEveryMs` late. */
  constructor(
    private readonly checkEveryMs: number,
    private readonly now: () => number = () => performance.now(),
    /** Where a failing `expire` is reported; the other deadlines of the same check still fire. */
    private readonly onError: (error: unknown) => void = reportExpireError,
  ) {}

  /**
   * A sweeper that checks `checksPerTimeout` times per `timeoutMs` (5 ms to 1 s apart): a deadline of that
   * length fires at most that fraction of it late.
   */
  static forTimeout(timeoutMs: number, checksPerTimeout = 8, now?: () => number): DeadlineSweeper {
    return new DeadlineSweeper(Math.min(1_000, Math.max(5, Math.floor(timeoutMs / checksPerTimeout))), now);
  }

  /** Calls `expire` once `timeoutMs` has passed, unless `release` comes first. */
  watch(timeoutMs: number, expire: () => void): WatchedDeadline {
    const entry = { deadline: this.now() + timeoutMs, expire };
    this.watched.add(entry);
    // The interval runs while anything is watched and stops on the first check that finds nothing.
    if (this.timer === undefined) {
      this.timer = setInterval(this.check, this.checkEveryMs);
      // Deadlines alone never keep a process alive; the sockets and runs they watch do.
      this.timer.unref();
    }
    return entry;
  }

  release(entry: WatchedDeadline): void {
    this.watched.delete(entry);
  }

  get size(): number {
    return this.watched.size;
  }

  /** Forgets every deadline without firing it (a stopping service). */
  clear(): void {
    this.watched.clear();
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
      try {
        entry.expire();
      } catch (error) {
        this.onError(error);
      }
    }
  };
}

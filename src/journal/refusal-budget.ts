/** @module The limit for all client addresses together on listed refusals: lines and bytes a minute, the rest counted and told once. */

const WINDOW_MS = 60_000;

/** Told once per minute in which refusals were left out: how many, and when that minute started (epoch ms). */
export type BudgetReport = (suppressed: number, since: number) => void;

/**
 * At most `linesPerMinute` lines and about `bytesPerMinute` bytes of listed refusals a minute (a fixed window from the
 * first one), whatever address they come from: the per-address limit alone lets a flood from many addresses write
 * without end. A line is listed while the minute has room left, so the bytes may pass the budget by one line. What
 * is left out is counted, and the count told once: when the minute ends (a timer), when the next minute's first
 * refusal comes, or at `flush()` (the journal's close).
 */
export class RefusalBudget {
  private start = Number.NEGATIVE_INFINITY;
  private lines = 0;
  private bytes = 0;
  private suppressed = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly linesPerMinute: number,
    private readonly bytesPerMinute: number,
    private readonly report: BudgetReport,
  ) {}

  /** Whether one more refusal may be listed at `now`; false counts it. */
  admit(now: number): boolean {
    if (now - this.start >= WINDOW_MS) {
      this.flush();
      this.start = now;
      this.lines = 0;
      this.bytes = 0;
    }
    if (this.lines < this.linesPerMinute && this.bytes < this.bytesPerMinute) return true;
    if (this.suppressed++ === 0) {
      this.timer = setTimeout(() => this.flush(), Math.max(0, this.start + WINDOW_MS - now));
      this.timer.unref();
    }
    return false;
  }

  /** A listed line: its bytes, newline included. */
  spend(bytes: number): void {
    this.lines++;
    this.bytes += bytes;
  }

  /** Tells the count left out so far, if any. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.suppressed === 0) return;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    this.report(suppressed, this.start);
  }
}

/** @module The per-address limit on listed refusals: a flood of refused requests cannot fill the disk, and what it left out is counted. */

/** Client addresses tracked at once; a flood from more addresses than this shares one allowance (see `admit`). */
export const MAX_TRACKED_CLIENTS = 1_000;
const WINDOW_MS = 60_000;
/** Expired windows are swept at most this often, so a flood of new addresses does not sweep per request. */
const SWEEP_EVERY_MS = 1_000;
/** The allowance shared by addresses that arrive while the table is full of live windows. */
const OTHERS = "";

interface Window {
  /** When this minute started (epoch ms). */
  start: number;
  listed: number;
  /** Left out since the address's last listed refusal. */
  suppressed: number;
}

/**
 * At most `perMinute` refusals per client address per minute (a fixed window from the first one) are listed; the
 * rest are counted, and the next listed refusal of that address carries the count (`suppressed`). Memory is bounded:
 * at most MAX_TRACKED_CLIENTS addresses; beyond them, addresses share one more allowance of `perMinute`. A count
 * whose address sends nothing more is dropped with its window once the table needs the room.
 */
export class RefusalLimit {
  private readonly windows = new Map<string, Window>();
  private sweptAt = 0;

  constructor(
    private readonly perMinute: number,
    private readonly maxClients: number = MAX_TRACKED_CLIENTS,
  ) {}

  /** Undefined: leave this refusal out (it is counted). A number: list it, with the count left out before it. */
  admit(client: string, now: number): number | undefined {
    let key = client;
    let window = this.windows.get(key);
    if (window === undefined && this.windows.size >= this.maxClients) {
      this.sweep(now);
      if (this.windows.size >= this.maxClients) {
        key = OTHERS;
        window = this.windows.get(OTHERS);
      }
    }
    if (window === undefined) {
      window = { start: now, listed: 0, suppressed: 0 };
      this.windows.set(key, window);
    } else if (now - window.start >= WINDOW_MS) {
      window.start = now;
      window.listed = 0;
    }
    if (window.listed >= this.perMinute) {
      window.suppressed++;
      return undefined;
    }
    window.listed++;
    const suppressed = window.suppressed;
    window.suppressed = 0;
    return suppressed;
  }

  /** Addresses tracked now (tests check the bound). */
  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (const [key, window] of this.windows) if (now - window.start >= WINDOW_MS) this.windows.delete(key);
  }
}

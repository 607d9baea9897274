/** @module The in-process Store: counters in a Map with expiry, bounded so an address scan cannot grow it without end. */
import { type Clock, systemClock } from "../clock.js";
import type { CounterWindow, Store } from "./store.js";

/** Beyond this many keys, expired windows are swept, then the oldest dropped. */
export const MAX_COUNTERS = 10_000;

export class MemoryStore implements Store {
  private readonly counters = new Map<string, CounterWindow>();

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly maxCounters = MAX_COUNTERS,
  ) {}

  async increment(key: string, windowMs: number): Promise<CounterWindow> {
    const now = this.clock.now();
    let window = this.counters.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      // Re-inserted so Map order stays oldest-first for the sweep.
      this.counters.delete(key);
      this.counters.set(key, window);
      if (this.counters.size > this.maxCounters) this.sweep(now);
    }
    window.count++;
    return { count: window.count, resetAt: window.resetAt };
  }

  async reset(key: string): Promise<void> {
    this.counters.delete(key);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }

  /** Number of live counters (tests of the bound). */
  get size(): number {
    return this.counters.size;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.counters) if (window.resetAt <= now) this.counters.delete(key);
    for (const key of this.counters.keys()) {
      if (this.counters.size <= this.maxCounters) break;
      this.counters.delete(key);
    }
  }
}

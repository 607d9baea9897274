/** @module The in-process Store: counters and delivery ids in Maps with expiry, each bounded so a flood cannot grow it without end. */
import { type Clock, systemClock } from "../clock.js";
import type { ClaimTimes, CounterWindow, DeliveryClaim, Store, StoredResponse } from "./store.js";

/** Beyond this many counters, expired windows are swept, then the oldest dropped. */
export const MAX_COUNTERS = 10_000;
/** Delivery ids kept by default (`hooks.dedupe.maxEntries`). */
export const MAX_DELIVERIES = 100_000;

export interface MemoryStoreLimits {
  maxCounters?: number;
  maxDeliveries?: number;
}

interface Delivery {
  expiresAt: number;
  /** Set once the first request was answered. */
  response?: StoredResponse;
  /** Requests with the same id waiting for this one's answer. */
  waiters: Array<() => void>;
}

export class MemoryStore implements Store {
  private readonly counters = new Map<string, CounterWindow>();
  private readonly deliveries = new Map<string, Delivery>();
  private readonly maxCounters: number;
  private readonly maxDeliveries: number;

  constructor(
    private readonly clock: Clock = systemClock,
    limits: MemoryStoreLimits = {},
  ) {
    this.maxCounters = limits.maxCounters ?? MAX_COUNTERS;
    this.maxDeliveries = limits.maxDeliveries ?? MAX_DELIVERIES;
  }

  async increment(key: string, windowMs: number): Promise<CounterWindow> {
    const now = this.clock.now();
    let window = this.counters.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      // Re-inserted so Map order stays oldest-first for the sweep.
      this.counters.delete(key);
      this.counters.set(key, window);
      if (this.counters.size > this.maxCounters) {
        sweep(this.counters, this.maxCounters, (entry) => entry.resetAt <= now);
      }
    }
    window.count++;
    return { count: window.count, resetAt: window.resetAt };
  }

  async reset(key: string): Promise<void> {
    this.counters.delete(key);
  }

  async claimDelivery(key: string, times: ClaimTimes): Promise<DeliveryClaim> {
    const giveUpAt = Date.now() + times.waitMs;
    for (;;) {
      const now = this.clock.now();
      const existing = this.deliveries.get(key);
      if (!existing || existing.expiresAt <= now) {
        // Checked and set with no await in between: of simultaneous requests, exactly one gets here first.
        this.deliveries.delete(key);
        this.deliveries.set(key, { expiresAt: now + times.holdMs, waiters: [] });
        if (this.deliveries.size > this.maxDeliveries) {
          sweep(this.deliveries, this.maxDeliveries, (entry) => entry.expiresAt <= now);
        }
        return { state: "first" };
      }
      if (existing.response) return { state: "answered", response: existing.response };
      const waitMs = giveUpAt - Date.now();
      if (waitMs <= 0) return { state: "in-progress" };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        existing.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async settleDelivery(key: string, response: StoredResponse | undefined, keepMs: number): Promise<void> {
    const entry = this.deliveries.get(key);
    if (!entry) return;
    if (response === undefined) {
      this.deliveries.delete(key);
    } else {
      entry.response = response;
      entry.expiresAt = this.clock.now() + keepMs;
    }
    const waiters = entry.waiters.splice(0);
    for (const wake of waiters) wake();
  }

  async close(): Promise<void> {
    this.counters.clear();
    for (const entry of this.deliveries.values()) for (const wake of entry.waiters.splice(0)) wake();
    this.deliveries.clear();
  }

  /** Number of live counters (tests of the bound). */
  get size(): number {
    return this.counters.size;
  }

  /** Number of remembered delivery ids (tests of the bound). */
  get deliveryCount(): number {
    return this.deliveries.size;
  }
}

/** Drops expired entries, then the oldest, until the map is within `max`. */
function sweep<T>(map: Map<string, T>, max: number, expired: (entry: T) => boolean): void {
  for (const [key, entry] of map) if (expired(entry)) map.delete(key);
  for (const key of map.keys()) {
    if (map.size <= max) break;
    map.delete(key);
  }
}

/** @module The in-process Store: counters and delivery ids in Maps with expiry, each bounded so a flood cannot grow it without end. */
import { type Clock, systemClock } from "../clock.js";
import { CounterTable } from "./counter-table.js";
import { OldestFirst } from "./oldest-first.js";
import type {
  ClaimTimes,
  CounterRule,
  CounterWindow,
  DeliveryClaim,
  RememberedAnswer,
  Store,
  StoredResponse,
} from "./store.js";

/**
 * Clients' counters kept at most: beyond, the oldest below their limit go first, so that first-time clients push out
 * only their own kind, never a throttled address (see CounterTable).
 */
export const MAX_COUNTERS = 10_000;
/**
 * Shared counters (hook-wide rate limits) kept at most: as many as the config has rules, plus those a reload left to
 * run out. Clients cannot add to them.
 */
export const MAX_SHARED_COUNTERS = 1_000;
/** Delivery ids kept by default (`hooks.dedupe.maxEntries`). */
export const MAX_DELIVERIES = 100_000;

export interface MemoryStoreLimits {
  maxCounters?: number;
  maxDeliveries?: number;
}

interface Delivery {
  /** The owner's claim id. */
  claim: string;
  expiresAt: number;
  /** Set once the first request was answered. */
  response?: StoredResponse;
  /** Requests with the same id waiting for this one's answer; most ids never have one, so made on demand. */
  waiters?: Array<() => void> | undefined;
}

export class MemoryStore implements Store {
  private readonly counters: CounterTable;
  private readonly shared: CounterTable;
  private readonly deliveries = new Map<string, Delivery>();
  private readonly oldestDeliveries = new OldestFirst(this.deliveries);
  private readonly maxDeliveries: number;
  private closed = false;
  /** Claim ids need only be unique within this store: a counter, not a random id per request. */
  private claims = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    limits: MemoryStoreLimits = {},
  ) {
    this.counters = new CounterTable(limits.maxCounters ?? MAX_COUNTERS, clock);
    this.shared = new CounterTable(MAX_SHARED_COUNTERS, clock);
    this.maxDeliveries = limits.maxDeliveries ?? MAX_DELIVERIES;
  }

  async increment(key: string, windowMs: number, rule?: CounterRule): Promise<CounterWindow> {
    const table = rule?.shared === true ? this.shared : this.counters;
    return table.increment(key, windowMs, rule?.limit ?? Number.POSITIVE_INFINITY);
  }

  async peek(key: string): Promise<CounterWindow | undefined> {
    return this.counters.peek(key) ?? this.shared.peek(key);
  }

  async reset(key: string): Promise<void> {
    this.counters.delete(key);
    this.shared.delete(key);
  }

  async claimDelivery(key: string, times: ClaimTimes): Promise<DeliveryClaim> {
    const giveUpAt = Date.now() + times.waitMs;
    for (;;) {
      // A closing store answers nothing new: a waiter woken by close() must not become "first".
      if (this.closed) return { state: "in-progress" };
      const now = this.clock.now();
      const existing = this.deliveries.get(key);
      if (!existing || existing.expiresAt <= now) {
        // Checked and set with no await in between: of simultaneous requests, exactly one gets here first.
        const claim = String(++this.claims);
        this.deliveries.delete(key);
        this.deliveries.set(key, { claim, expiresAt: now + times.holdMs });
        this.oldestDeliveries.trimTo(this.maxDeliveries);
        return { state: "first", claim };
      }
      if (existing.response) return { state: "answered", response: existing.response };
      const waitMs = giveUpAt - Date.now();
      if (waitMs <= 0) return { state: "in-progress" };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        existing.waiters ??= [];
        existing.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async settleDelivery(
    key: string,
    claim: string,
    response: StoredResponse | undefined,
    keepMs: number,
  ): Promise<void> {
    const entry = this.deliveries.get(key);
    if (!entry || entry.claim !== claim) return;
    if (response === undefined) {
      this.deliveries.delete(key);
    } else {
      entry.response = response;
      entry.expiresAt = this.clock.now() + keepMs;
    }
    const waiters = entry.waiters;
    entry.waiters = undefined;
    for (const wake of waiters ?? []) wake();
  }

  async rememberDeliveries(answers: readonly RememberedAnswer[]): Promise<number> {
    let remembered = 0;
    for (const { key, response, keepMs } of answers) {
      const claim = await this.claimDelivery(key, { holdMs: keepMs, waitMs: 0 });
      if (claim.state !== "first") continue;
      await this.settleDelivery(key, claim.claim, response, keepMs);
      remembered++;
    }
    return remembered;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.counters.clear();
    this.shared.clear();
    for (const entry of this.deliveries.values()) for (const wake of entry.waiters?.splice(0) ?? []) wake();
    this.deliveries.clear();
  }

  /** Number of clients' counters kept (tests of the bound). */
  get size(): number {
    return this.counters.size;
  }

  /** Number of remembered delivery ids (tests of the bound). */
  get deliveryCount(): number {
    return this.deliveries.size;
  }
}

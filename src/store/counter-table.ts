/** @module A bounded table of counter windows that, when full, drops counters still below their limit before any that reached it. */
import type { Clock } from "../clock.js";
import { OldestFirst } from "./oldest-first.js";
import type { CounterWindow } from "./store.js";

interface Counter extends CounterWindow {
  /** The count at which this counter is kept over others (`CounterRule.limit`); Infinity: never. */
  limit: number;
}

/**
 * Counters in two Maps, each oldest-first: those below their limit, and those that reached it (a client being
 * refused, or one hit from it). A full table drops the oldest below the limit: a flood of first-time clients,
 * each at one hit, pushes out only its own kind, never a throttled address, which would get a fresh budget.
 * Only when every counter has reached its limit do those go, the expired ones first, then the oldest.
 */
export class CounterTable {
  private readonly below = new Map<string, Counter>();
  private readonly reached = new Map<string, Counter>();
  private readonly oldestBelow = new OldestFirst(this.below);
  private readonly oldestReached = new OldestFirst(this.reached);
  /** No counter in `reached` expires before this: a sweep sooner would find nothing to drop. */
  private sweepReachedAt = 0;

  constructor(
    private readonly max: number,
    private readonly clock: Clock,
  ) {}

  increment(key: string, windowMs: number, limit: number): CounterWindow {
    const now = this.clock.now();
    let counter = this.get(key);
    if (counter === undefined || counter.resetAt <= now) {
      this.delete(key);
      counter = { count: 0, resetAt: now + windowMs, limit };
      this.below.set(key, counter);
    }
    counter.count++;
    if (counter.count >= counter.limit && this.below.delete(key)) {
      this.reached.set(key, counter);
      // A shorter window than those swept before: the next sweep must not wait past its end.
      if (counter.resetAt < this.sweepReachedAt) this.sweepReachedAt = counter.resetAt;
    }
    this.trim(now);
    return { count: counter.count, resetAt: counter.resetAt };
  }

  /** The running window of `key`, undefined when none runs. */
  peek(key: string): CounterWindow | undefined {
    const counter = this.get(key);
    if (counter === undefined || counter.resetAt <= this.clock.now()) return undefined;
    return { count: counter.count, resetAt: counter.resetAt };
  }

  /** Every accepted credential resets its count: an empty table is not looked into. */
  delete(key: string): void {
    if (this.size === 0) return;
    if (!this.below.delete(key) && this.reached.size > 0) this.reached.delete(key);
  }

  clear(): void {
    this.below.clear();
    this.reached.clear();
  }

  get size(): number {
    return this.below.size + this.reached.size;
  }

  private get(key: string): Counter | undefined {
    return this.below.get(key) ?? (this.reached.size > 0 ? this.reached.get(key) : undefined);
  }

  private trim(now: number): void {
    if (this.size <= this.max) return;
    if (this.reached.size >= this.max) {
      // Every place is a counter at its limit: make room for one more, expired ones going first.
      this.sweepReached(now);
      this.oldestReached.trimTo(this.max - 1);
    }
    this.oldestBelow.trimTo(this.max - this.reached.size);
  }

  /** Drops the expired counters of `reached`, at most once per expiry: a table full of live ones is not walked per hit. */
  private sweepReached(now: number): void {
    if (now < this.sweepReachedAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, counter] of this.reached) {
      if (counter.resetAt <= now) this.reached.delete(key);
      else next = Math.min(next, counter.resetAt);
    }
    this.sweepReachedAt = next;
  }
}

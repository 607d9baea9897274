/** @module The limits on listed refusals: per address (memory bounded under a flood from many), for all addresses together, per duplicate delivery. */
import { describe, expect, it, vi } from "vitest";
import { AnsweredLimits, REPEATS_PER_MINUTE } from "../../src/journal/answered-limits.js";
import { RefusalBudget } from "../../src/journal/refusal-budget.js";
import { RefusalLimit } from "../../src/journal/refusal-limit.js";

describe("refusal limit", () => {
  it("lists the limit per address per minute, then tells the count on the next one listed", () => {
    const limit = new RefusalLimit(2);
    expect([0, 1, 2, 3].map(() => limit.admit("a", 1_000))).toEqual([0, 0, undefined, undefined]);
    expect(limit.admit("b", 1_000)).toBe(0);
    expect(limit.admit("a", 60_999)).toBeUndefined();
    expect(limit.admit("a", 61_000)).toBe(3);
    expect(limit.admit("a", 61_001)).toBe(0);
  });

  it("tracks at most its table of addresses; more share one allowance, and expired ones make room", () => {
    const limit = new RefusalLimit(1, 10);
    const listed = Array.from({ length: 1_000 }, (_, i) => limit.admit(`10.0.${i >> 8}.${i & 255}`, 0));
    // Ten addresses of their own, then one listed refusal for all the others together.
    expect(listed.filter((count) => count !== undefined)).toHaveLength(11);
    expect(limit.size).toBeLessThanOrEqual(11);
    // A minute on, the old windows are swept and a new address has a place of its own again.
    expect(limit.admit("192.0.2.1", 60_000)).toBe(0);
    expect(limit.admit("192.0.2.2", 60_000)).toBe(0);
    expect(limit.size).toBeLessThanOrEqual(11);
  });
});

describe("refusal budget for all addresses", () => {
  it("lists while the minute has room in lines and in bytes, then counts, and tells the count once", () => {
    const told: Array<[number, number]> = [];
    const budget = new RefusalBudget(3, 1_000, (count, since) => told.push([count, since]));
    const listed = (now: number, bytes = 100) => {
      const ok = budget.admit(now);
      if (ok) budget.spend(bytes);
      return ok;
    };
    expect([listed(0), listed(1), listed(2), listed(3), listed(4)]).toEqual([true, true, true, false, false]);
    expect(told).toEqual([]);
    // The next minute: the count of the one before is told as it starts, once.
    expect(listed(60_000, 600)).toBe(true);
    expect(told).toEqual([[2, 0]]);
    // Bytes run out before lines do: one line may pass the budget, then nothing more this minute.
    expect([listed(60_001, 600), listed(60_002)]).toEqual([true, false]);
    budget.flush();
    budget.flush();
    expect(told).toEqual([
      [2, 0],
      [1, 60_000],
    ]);
  });

  it("tells the count when the minute ends, though no refusal comes after it", async () => {
    vi.useFakeTimers();
    try {
      const told: number[] = [];
      const budget = new RefusalBudget(0, 1_000, (count) => told.push(count));
      budget.admit(Date.now());
      budget.admit(Date.now());
      await vi.advanceTimersByTimeAsync(59_000);
      expect(told).toEqual([]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(told).toEqual([2]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("duplicate listings", () => {
  it("are listed a few times a minute per delivery, then counted; another delivery has its own", () => {
    const limits = new AnsweredLimits({
      perClient: 60,
      totalLines: 600,
      totalBytes: 1 << 20,
      report: () => {},
    });
    const duplicate = (delivery: string, at: number) =>
      limits.admit({ id: "r", at, hook: "github", status: 200, code: "DUPLICATE" }, { series: delivery });
    const first = Array.from({ length: 10 }, () => duplicate("delivery:github:a", 0));
    expect(first).toEqual([0, 0, 0, ...Array(7).fill(undefined)]);
    expect(duplicate("delivery:github:b", 0)).toBe(0);
    expect(REPEATS_PER_MINUTE).toBe(3);
    expect(duplicate("delivery:github:a", 60_000)).toBe(7);
  });
});

/** @module The per-address limit on listed refusals keeps its memory bounded under a flood from many addresses. */
import { describe, expect, it } from "vitest";
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

import { afterEach, describe, expect, it, vi } from "vitest";
import { BodyDeadlines } from "../../src/http/body-deadlines.js";

describe("BodyDeadlines", () => {
  afterEach(() => vi.useRealTimers());

  it("expires a watched body after the timeout, at most one check interval late, and only once", () => {
    vi.useFakeTimers();
    let clock = 0;
    const deadlines = new BodyDeadlines(800, () => clock);
    const expired: string[] = [];
    deadlines.watch(() => expired.push("slow"));
    for (let step = 0; step < 8; step++) {
      clock += 100;
      vi.advanceTimersByTime(100);
    }
    // 800 ms passed: due now, and the check interval is 100 ms (an eighth of the timeout).
    expect(expired).toEqual(["slow"]);
    clock += 1_000;
    vi.advanceTimersByTime(1_000);
    expect(expired).toEqual(["slow"]);
    expect(deadlines.size).toBe(0);
  });

  it("never expires a released body, and stops its timer once nothing is watched", () => {
    vi.useFakeTimers();
    let clock = 0;
    const deadlines = new BodyDeadlines(400, () => clock);
    const expired: string[] = [];
    const fast = deadlines.watch(() => expired.push("fast"));
    deadlines.watch(() => expired.push("slow"));
    deadlines.release(fast);
    clock += 500;
    vi.advanceTimersByTime(500);
    expect(expired).toEqual(["slow"]);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("checks often enough for short timeouts and at least once a second for long ones", () => {
    vi.useFakeTimers();
    let clock = 0;
    const long = new BodyDeadlines(30_000, () => clock);
    const expired: number[] = [];
    long.watch(() => expired.push(clock));
    clock = 30_000;
    vi.advanceTimersByTime(30_000);
    expect(expired).toEqual([30_000]);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { DeadlineSweeper } from "../src/deadline-sweeper.js";

describe("DeadlineSweeper", () => {
  afterEach(() => vi.useRealTimers());

  it("expires a watched body after the timeout, at most one check interval late, and only once", () => {
    vi.useFakeTimers();
    let clock = 0;
    const deadlines = DeadlineSweeper.forTimeout(800, 8, () => clock);
    const expired: string[] = [];
    deadlines.watch(800, () => expired.push("slow"));
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
    const deadlines = DeadlineSweeper.forTimeout(400, 8, () => clock);
    const expired: string[] = [];
    const fast = deadlines.watch(400, () => expired.push("fast"));
    deadlines.watch(400, () => expired.push("slow"));
    deadlines.release(fast);
    clock += 500;
    vi.advanceTimersByTime(500);
    expect(expired).toEqual(["slow"]);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("checks at least once a second for long timeouts, and more often when asked", () => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
    const clock = () => Date.now();
    const expired: string[] = [];
    const long = DeadlineSweeper.forTimeout(30_000, 8, clock);
    const fine = DeadlineSweeper.forTimeout(3_300, 32, clock);
    // Each interval starts with a first deadline; the measured ones come 50 ms later, between two checks.
    long.watch(60_000, () => undefined);
    fine.watch(60_000, () => undefined);
    vi.advanceTimersByTime(50);
    long.watch(30_000, () => expired.push("long"));
    fine.watch(3_300, () => expired.push("fine"));
    // 32 checks per 3.3 s are 103 ms apart: the check at 3,399 ms fires it (at 412 ms apart, not before 3,708).
    vi.advanceTimersByTime(3_350);
    expect(expired).toEqual(["fine"]);
    // Eight checks per 30 s would be 3.75 s apart; capped at a second, the check at 31,000 ms fires it.
    vi.advanceTimersByTime(30_049 - 3_400);
    expect(expired).toEqual(["fine"]);
    vi.advanceTimersByTime(951);
    expect(expired).toEqual(["fine", "long"]);
  });
});

describe("DeadlineSweeper with deadlines of different lengths", () => {
  afterEach(() => vi.useRealTimers());

  it("fires each deadline on the first check at or after it, in one shared timer", () => {
    vi.useFakeTimers();
    let clock = 0;
    const sweeper = new DeadlineSweeper(1_000, () => clock);
    const fired: string[] = [];
    sweeper.watch(2_500, () => fired.push("short"));
    sweeper.watch(5_000, () => fired.push("long"));
    expect(vi.getTimerCount()).toBe(1);
    const step = (ms: number) => {
      clock += ms;
      vi.advanceTimersByTime(ms);
    };
    step(2_000);
    expect(fired).toEqual([]);
    step(1_000);
    expect(fired).toEqual(["short"]);
    step(2_000);
    expect(fired).toEqual(["short", "long"]);
  });

  it("a failing deadline is reported and the others of the same check still fire", () => {
    vi.useFakeTimers();
    let clock = 0;
    const errors: unknown[] = [];
    const sweeper = new DeadlineSweeper(
      100,
      () => clock,
      (error) => errors.push(error),
    );
    const fired: string[] = [];
    sweeper.watch(100, () => {
      throw new Error("broken");
    });
    sweeper.watch(100, () => fired.push("fine"));
    clock += 100;
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(["fine"]);
    expect(errors).toEqual([new Error("broken")]);
  });

  it("clear forgets every deadline without firing it", () => {
    vi.useFakeTimers();
    let clock = 0;
    const sweeper = new DeadlineSweeper(100, () => clock);
    const fired: string[] = [];
    sweeper.watch(100, () => fired.push("x"));
    sweeper.clear();
    clock += 500;
    vi.advanceTimersByTime(500);
    expect(fired).toEqual([]);
    expect(sweeper.size).toBe(0);
  });
});

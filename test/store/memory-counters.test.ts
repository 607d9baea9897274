/** @module The in-memory Store's counters when full: clients below their limit go first, a throttled one last, a hook-wide one never for clients. */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/store/memory.js";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const AUTH = { limit: 3 };
const WINDOW = 60_000;

describe("counters in memory, bounded", () => {
  it("a flood of first-time clients pushes out only counters below their limit", async () => {
    const store = new MemoryStore(clock(), { maxCounters: 10 });
    for (let i = 0; i < 3; i++) await store.increment("auth-failures:throttled", WINDOW, AUTH);
    await store.increment("auth-failures:two", WINDOW, AUTH);
    await store.increment("auth-failures:two", WINDOW, AUTH);
    for (let i = 0; i < 1_000; i++) await store.increment(`auth-failures:stranger-${i}`, WINDOW, AUTH);
    expect(store.size).toBe(10);
    expect((await store.peek("auth-failures:throttled"))?.count).toBe(3);
    expect(await store.peek("auth-failures:two")).toBeUndefined();
    expect((await store.peek("auth-failures:stranger-999"))?.count).toBe(1);
    // Still counted on: the counter keeps its place past the limit, and a reset forgets it.
    expect((await store.increment("auth-failures:throttled", WINDOW, AUTH)).count).toBe(4);
    await store.reset("auth-failures:throttled");
    expect(await store.peek("auth-failures:throttled")).toBeUndefined();
  });

  it("a hook-wide counter is kept apart: clients' counters never push it out", async () => {
    const store = new MemoryStore(clock(), { maxCounters: 5 });
    const hook = { limit: 100, shared: true };
    expect((await store.increment("rate:wake:60s:*", WINDOW, hook)).count).toBe(1);
    for (let i = 0; i < 100; i++) await store.increment(`auth-failures:stranger-${i}`, WINDOW, AUTH);
    expect((await store.increment("rate:wake:60s:*", WINDOW, hook)).count).toBe(2);
    expect((await store.peek("rate:wake:60s:*"))?.count).toBe(2);
    expect(store.size).toBe(5);
  });

  it("full of throttled counters: a newcomer takes an expired one's place first, else the oldest's", async () => {
    const time = clock();
    const store = new MemoryStore(time, { maxCounters: 3 });
    const throttle = async (key: string, windowMs: number) => {
      for (let i = 0; i < 3; i++) await store.increment(key, windowMs, AUTH);
    };
    await throttle("old", WINDOW);
    await throttle("short", 1_000);
    await throttle("young", WINDOW);
    time.advance(1_001);
    await store.increment("newcomer", WINDOW, AUTH);
    expect(await store.peek("old")).toBeDefined();
    expect(await store.peek("young")).toBeDefined();
    expect((await store.peek("newcomer"))?.count).toBe(1);
    expect(store.size).toBe(3);
    // None expired now: the oldest throttled goes.
    await throttle("newcomer", WINDOW);
    await store.increment("another", WINDOW, AUTH);
    expect(await store.peek("old")).toBeUndefined();
    expect(await store.peek("young")).toBeDefined();
    expect(store.size).toBe(3);
  });

  it("a throttled counter of a shorter window than those swept before is swept when it ends, not the oldest live one", async () => {
    const time = clock();
    const store = new MemoryStore(time, { maxCounters: 3 });
    const throttle = async (key: string, windowMs: number) => {
      for (let i = 0; i < 3; i++) await store.increment(key, windowMs, AUTH);
    };
    // An hour-long throttle fills the table; a sweep then finds nothing before the hour is out.
    await throttle("hour-1", 3_600_000);
    await throttle("hour-2", 3_600_000);
    await throttle("hour-3", 3_600_000);
    await throttle("hour-4", 3_600_000);
    expect(await store.peek("hour-1")).toBeUndefined();
    // A one-minute throttle takes the oldest's place, and ends.
    await throttle("minute", WINDOW);
    time.advance(WINDOW + 1);
    await store.increment("newcomer", WINDOW, AUTH);
    // The ended minute made room: every hour-long throttle still live stays.
    for (const key of ["hour-3", "hour-4"]) expect(await store.peek(key)).toBeDefined();
    expect((await store.peek("newcomer"))?.count).toBe(1);
  });
});

/** @module The in-memory Store's delivery claims: one first of many, owner-only settling, bounded, and quiet on close. */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/store/memory.js";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const TIMES = { holdMs: 60_000, waitMs: 1_000 };
const ANSWER = { status: 200, contentType: "application/json; charset=utf-8", body: '{"ok":true}' };

describe("delivery claims in memory", () => {
  it("of many claims at once, one is first and the others get its answer once it is settled", async () => {
    const store = new MemoryStore(clock());
    const claims = Array.from({ length: 20 }, () => store.claimDelivery("k", TIMES));
    const first = await claims[0]!;
    expect(first.state).toBe("first");
    await store.settleDelivery("k", (first as { claim: string }).claim, ANSWER, 86_400_000);
    const rest = await Promise.all(claims.slice(1));
    expect(rest.every((claim) => claim.state === "answered")).toBe(true);
  });

  it("a claim that outlived its hold cannot settle the next owner's claim", async () => {
    const time = clock();
    const store = new MemoryStore(time);
    const stale = await store.claimDelivery("k", TIMES);
    time.advance(TIMES.holdMs + 1);
    const owner = await store.claimDelivery("k", TIMES);
    expect(owner.state).toBe("first");
    // The stale request finishes late and was refused: it must not free the id the owner holds.
    await store.settleDelivery("k", (stale as { claim: string }).claim, undefined, 1);
    await store.settleDelivery("k", (owner as { claim: string }).claim, ANSWER, 86_400_000);
    expect(await store.claimDelivery("k", TIMES)).toEqual({ state: "answered", response: ANSWER });
  });

  it("forgets an answer after its keep time, and frees a refused claim at once", async () => {
    const time = clock();
    const store = new MemoryStore(time);
    const a = await store.claimDelivery("a", TIMES);
    await store.settleDelivery("a", (a as { claim: string }).claim, ANSWER, 10_000);
    time.advance(10_001);
    expect((await store.claimDelivery("a", TIMES)).state).toBe("first");
    const b = await store.claimDelivery("b", TIMES);
    await store.settleDelivery("b", (b as { claim: string }).claim, undefined, 10_000);
    expect((await store.claimDelivery("b", TIMES)).state).toBe("first");
  });

  it("keeps at most maxDeliveries ids, dropping the oldest", async () => {
    const store = new MemoryStore(clock(), { maxDeliveries: 3 });
    for (const key of ["a", "b", "c", "d", "e"]) {
      const claim = await store.claimDelivery(key, TIMES);
      await store.settleDelivery(key, (claim as { claim: string }).claim, ANSWER, 86_400_000);
    }
    expect(store.deliveryCount).toBe(3);
    expect((await store.claimDelivery("e", TIMES)).state).toBe("answered");
    expect((await store.claimDelivery("a", TIMES)).state).toBe("first");
  });

  it("a duplicate still waiting when the store closes is told to retry, not let through", async () => {
    const store = new MemoryStore(clock());
    await store.claimDelivery("k", TIMES);
    const waiting = store.claimDelivery("k", { holdMs: 60_000, waitMs: 60_000 });
    await store.close();
    expect(await waiting).toEqual({ state: "in-progress" });
  });
});

/** @module Store.peek on both stores: a counter's window read without counting a hit (a throttled address is refused before its body is read). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/store/memory.js";
import { RedisStore } from "../../src/store/redis.js";
import type { Store } from "../../src/store/store.js";
import { type RedisServer, redisSkipReason, startRedis } from "../helpers/redis-server.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

async function peeksWithoutCounting(store: Store): Promise<void> {
  expect(await store.peek("auth-failures:10.0.0.1")).toBeUndefined();
  const first = await store.increment("auth-failures:10.0.0.1", 60_000);
  await store.increment("auth-failures:10.0.0.1", 60_000);
  for (let i = 0; i < 3; i++) {
    const seen = await store.peek("auth-failures:10.0.0.1");
    expect(seen?.count).toBe(2);
    expect(Math.abs(seen!.resetAt - first.resetAt)).toBeLessThan(1_000);
  }
  expect((await store.increment("auth-failures:10.0.0.1", 60_000)).count).toBe(3);
  await store.reset("auth-failures:10.0.0.1");
  expect(await store.peek("auth-failures:10.0.0.1")).toBeUndefined();
}

describe("peek", () => {
  it("in memory: reads the window without counting, and nothing once it expired", async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ now: () => now });
    await peeksWithoutCounting(store);
    await store.increment("k", 1_000);
    now += 1_001;
    expect(await store.peek("k")).toBeUndefined();
  });

  const skipReason = redisSkipReason();
  describe.skipIf(skipReason !== undefined)(
    `on a real redis-server${skipReason ? ` (skipped: ${skipReason})` : ""}`,
    () => {
      let server: RedisServer;
      beforeAll(async () => {
        server = await startRedis();
      });
      afterAll(async () => {
        await server?.stop();
      });

      it("reads the window without counting", async () => {
        const store = new RedisStore({
          url: server.url,
          keyPrefix: "peek:",
          timeoutMs: 1_000,
          logger: QUIET,
        });
        await store.open();
        try {
          await peeksWithoutCounting(store);
        } finally {
          await store.close();
        }
      });
    },
  );
});

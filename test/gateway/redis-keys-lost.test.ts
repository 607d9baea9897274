/** @module A real redis-server that loses delivery ids one at a time (a DEL, an eviction): the gateway still answers their copies as duplicates, and refuses to start on a server whose policy evicts keys. */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";
import { type RedisServer, redisSkipReason, startRedis } from "../helpers/redis-server.js";
import { AUTH, baseConfig, readRecord, writeConfig } from "./support.js";

const skipReason = redisSkipReason();

let redis: RedisServer | undefined;
afterEach(async () => {
  await cleanupCli();
  await redis?.stop();
  redis = undefined;
});

interface Answer {
  status: number;
  body: string;
  replay: boolean;
}

async function wake(url: string, key: string, text: string): Promise<Answer> {
  const response = await fetch(`${url}/hooks/wake`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key, ...AUTH },
    body: JSON.stringify({ text }),
  });
  return {
    status: response.status,
    body: await response.text(),
    replay: response.headers.get("idempotent-replay") === "true",
  };
}

/** A gateway's config and arguments on `server`, its events recorded; `store` adds to `hooks.store`. */
function gatewayOn(server: RedisServer, store: Record<string, unknown> = {}) {
  const dir = makeTempDir();
  const config = writeConfig(
    dir,
    baseConfig({}, { store: { kind: "redis", url: server.url, keyPrefix: "lost:", ...store } }),
  );
  const record = path.join(dir, "events.jsonl");
  const args = ["--config", config, "--state-dir", path.join(dir, "state"), "--record", record];
  return { args, record };
}

async function admin(server: RedisServer) {
  const { Redis } = await import("ioredis");
  return new Redis(server.url);
}

describe.skipIf(skipReason !== undefined)(
  `delivery ids lost one at a time${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    it("50 ids deleted from Redis: every copy is answered as the duplicate it is, with its first answer, and not run again", async () => {
      redis = await startRedis();
      const { args, record } = gatewayOn(redis);
      const gateway = await startServe(args);
      const keys = Array.from({ length: 50 }, (_, i) => `lost-${i}`);
      const firsts = new Map<string, Answer>();
      for (const key of keys) firsts.set(key, await wake(gateway.url, key, `delivery ${key}`));
      expect([...firsts.values()].filter((answer) => answer.status !== 200 || answer.replay)).toEqual([]);

      const client = await admin(redis);
      try {
        // One key at a time, as an eviction takes them: the server keeps the rest, its generation among them.
        let deleted = 0;
        for (const key of keys) deleted += await client.del(`lost:delivery:wake:${key}`);
        expect(deleted).toBe(50);

        const copies = await Promise.all(keys.map((key) => wake(gateway.url, key, `delivery ${key}`)));
        const wrong = copies.flatMap((copy, i) => {
          const first = firsts.get(keys[i]!)!;
          return copy.status === 200 && copy.replay && copy.body === first.body
            ? []
            : [`${keys[i]}: ${copy.status}${copy.replay ? " (replay)" : ""}`];
        });
        expect(wrong).toEqual([]);
        // Written back: a copy reaching another gateway on this server finds its answer again.
        expect((await client.get("lost:delivery:wake:lost-7"))?.startsWith("!")).toBe(true);
      } finally {
        client.disconnect();
      }

      // A new id behind them, emitted: once it is on the record, so would any copy be.
      expect((await wake(gateway.url, "after", "delivery after")).replay).toBe(false);
      const wakes = () => readRecord(record).filter((line) => line.event === "session:system-event");
      await pollFor(
        () =>
          wakes().some((line) => String(line.payload.text).includes("delivery after")) ? true : undefined,
        "the wake after the copies",
      );
      const texts = wakes().map((line) => String(line.payload.text));
      const runs = keys.map(
        (key) => texts.filter((text) => new RegExp(`delivery ${key}\\b`).test(text)).length,
      );
      expect(runs).toEqual(keys.map(() => 1));
    });
  },
);

/** @module A real redis-server that loses delivery ids one at a time (a DEL, an eviction): the gateway still answers their copies as duplicates, and refuses to start on a server whose policy evicts keys. */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, runCli, startServe } from "../helpers/cli.js";
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

/** A gateway's config on `server`; `store` adds to `hooks.store`. */
const gatewayConfig = (server: RedisServer, store: Record<string, unknown> = {}) =>
  baseConfig({}, { store: { kind: "redis", url: server.url, keyPrefix: "lost:", ...store } });

/** A gateway's arguments on `server`, its events recorded. */
function gatewayOn(server: RedisServer, store: Record<string, unknown> = {}) {
  const dir = makeTempDir();
  const config = writeConfig(dir, gatewayConfig(server, store));
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

    it("a server whose maxmemory-policy evicts keys stops the start, naming the policy; allowEviction starts with a warning", async () => {
      redis = await startRedis({ args: ["--maxmemory-policy", "allkeys-lru"] });
      const refused = await startServe(gatewayOn(redis).args).then(
        () => "started",
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/may evict keys when its memory is full \(maxmemory-policy allkeys-lru\)/);
      expect(refused).toMatch(
        /set maxmemory-policy noeviction on the server, or hooks\.store\.allowEviction: true/,
      );
      const check = await runCli(["check", "--config", writeConfig(makeTempDir(), gatewayConfig(redis))]);
      expect(check.code).toBe(1);
      expect(check.stdout + check.stderr).toMatch(/maxmemory-policy allkeys-lru/);

      const allowed = await startServe(gatewayOn(redis, { allowEviction: true }).args);
      const warning = await allowed.waitForLog((line) => String(line.msg).includes("maxmemory-policy"));
      expect(warning.level).toBe("warn");
      expect(String(warning.msg)).toMatch(/allkeys-lru\); allowed by hooks\.store\.allowEviction/);
    });

    it("volatile-* evicts the ids too (they expire); a server that hides its policy starts with a warning", async () => {
      redis = await startRedis({ args: ["--maxmemory-policy", "volatile-lru"] });
      await expect(startServe(gatewayOn(redis).args)).rejects.toThrow(/maxmemory-policy volatile-lru/);
      await redis.stop();
      // Many managed services disable CONFIG: the policy cannot be read, which is said, and the gateway serves.
      redis = await startRedis({
        args: ["--maxmemory-policy", "volatile-lru", "--rename-command", "CONFIG", ""],
      });
      const gateway = await startServe(gatewayOn(redis).args);
      const warning = await gateway.waitForLog((line) => String(line.msg).includes("maxmemory-policy"));
      expect(String(warning.msg)).toMatch(
        /could not read the maxmemory-policy of shared store redis:\/\/127\.0\.0\.1:\d+ \(/,
      );
      expect((await wake(gateway.url, "k", "hello")).status).toBe(200);
    });
  },
);

/** @module Two `hooks serve` processes sharing one real redis-server: deliveries accepted exactly once, shared throttling, outages and recovery. */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, runCli, type Serve, startServe } from "../helpers/cli.js";
import { parseMetrics, sampleValue } from "../helpers/prometheus-text.js";
import { type RedisServer, redisSkipReason, startRedis } from "../helpers/redis-server.js";
import { AUTH, baseConfig, readRecord, writeConfig } from "./support.js";

/**
 * The tests that send hundreds of requests over two gateways: 5 to 7 s on 2 cores shared with the rest of the
 * suite, past the default 20 s beside other CPU-bound jobs. The work is bounded; only the machine's speed varies.
 */
const BULK_TIMEOUT_MS = 90_000;

const skipReason = redisSkipReason();
const SECRET = "github-secret-shared-by-both-gateways";

interface Answer {
  status: number;
  body: string;
  replay: boolean;
  retryAfter: string | null;
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return {
    status: response.status,
    body: await response.text(),
    replay: response.headers.get("idempotent-replay") === "true",
    retryAfter: response.headers.get("retry-after"),
  };
}

/** Runs `tasks` with at most `limit` in flight, in order: neighbours in the list are in flight together. */
async function inFlight<T>(tasks: ReadonlyArray<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

describe.skipIf(skipReason !== undefined)(
  `several gateways on one Redis${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let redis: RedisServer;
    let prefixes = 0;

    beforeAll(async () => {
      redis = await startRedis();
    });
    afterEach(cleanupCli);
    afterAll(async () => {
      await redis?.stop();
    });

    /** Two gateways with one config (each its own state dir, journal and record), on a key prefix of this test's own. */
    async function twoGateways(hooks: Record<string, unknown> = {}) {
      const dir = makeTempDir();
      const config = writeConfig(
        dir,
        baseConfig(
          {},
          {
            store: { kind: "redis", url: redis.url, keyPrefix: `test${++prefixes}:` },
            mappings: [
              {
                id: "github",
                match: { path: "github" },
                action: "agent",
                messageTemplate: "push to {{ref}}",
                verify: { scheme: "github", secret: SECRET },
              },
            ],
            ...hooks,
          },
        ),
      );
      /** Starts gateway `name` (again, after a stop: same state dir, same journal). */
      const start = async (name: string) => {
        const record = path.join(dir, `${name}.jsonl`);
        const args = ["--config", config, "--state-dir", path.join(dir, name), "--record", record];
        return { ...(await startServe(args)), record };
      };
      const gateways = [await start("a"), await start("b")] as const;
      return { config, gateways, start };
    }

    it("1,000 deliveries of 200 ids over both gateways at once: 200 turns, every copy answered with its first's answer", {
      timeout: BULK_TIMEOUT_MS,
    }, async () => {
      const { gateways } = await twoGateways();
      const deliveries = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const body = JSON.stringify({ ref: `refs/heads/branch-${i}` });
          return {
            body,
            headers: {
              "x-github-event": "push",
              "x-github-delivery": randomUUID(),
              "x-hub-signature-256": await githubSign(SECRET, body),
            },
          };
        }),
      );
      // Five copies of each delivery side by side, alternating gateways: copies of one id are in flight together.
      const tasks = deliveries.flatMap((delivery, i) =>
        Array.from({ length: 5 }, (_, copy) => () => {
          const gateway = gateways[(i + copy) % 2]!;
          return post(`${gateway.url}/hooks/github`, delivery.body, delivery.headers).then((answer) => ({
            id: delivery.headers["x-github-delivery"],
            gateway: gateway.url,
            answer,
          }));
        }),
      );
      const results = await inFlight(tasks, 50);

      expect(results.filter(({ answer }) => answer.status !== 202)).toEqual([]);
      const byId = new Map<string, typeof results>();
      for (const result of results) byId.set(result.id, [...(byId.get(result.id) ?? []), result]);
      expect(byId.size).toBe(200);
      for (const copies of byId.values()) {
        expect(copies.filter(({ answer }) => !answer.replay)).toHaveLength(1);
        // The runId in the body is the first's: the copies were not run again, wherever they landed.
        expect(new Set(copies.map(({ answer }) => answer.body)).size).toBe(1);
      }
      // Both gateways took first deliveries: the sharing was exercised both ways.
      const firstsAt = new Set(results.filter(({ answer }) => !answer.replay).map(({ gateway }) => gateway));
      expect(firstsAt.size).toBe(2);

      const turns = () =>
        gateways
          .flatMap(({ record }) => readRecord(record))
          .filter((line) => line.event === "session:agent-turn");
      await pollFor(() => (turns().length >= 200 ? true : undefined), "200 turns");
      const runIds = turns().map((line) => line.payload.runId as string);
      expect(runIds).toHaveLength(200);
      expect(new Set(runIds).size).toBe(200);
      const answered = new Set([...byId.values()].map((copies) => JSON.parse(copies[0]!.answer.body).runId));
      expect(new Set(runIds)).toEqual(answered);
    });

    it("25 wrong tokens split over both gateways: 429 on both after 20; the right token still gets in", async () => {
      const { gateways } = await twoGateways({ authFailures: { limit: 20, windowSeconds: 600 } });
      const wake = JSON.stringify({ text: "hello" });
      const statuses: Array<{ gateway: number; status: number }> = [];
      for (let i = 0; i < 25; i++) {
        const gateway = i % 2;
        const answer = await post(`${gateways[gateway]!.url}/hooks/wake`, wake, {
          authorization: "Bearer wrong",
        });
        statuses.push({ gateway, status: answer.status });
      }
      expect(statuses.slice(0, 20).every(({ status }) => status === 401)).toBe(true);
      expect(statuses.slice(20).every(({ status }) => status === 429)).toBe(true);
      expect(new Set(statuses.slice(20).map(({ gateway }) => gateway))).toEqual(new Set([0, 1]));
      // A correct token is always accepted, and clears the address's count on every gateway.
      expect((await post(`${gateways[1]!.url}/hooks/wake`, wake, AUTH)).status).toBe(200);
      expect(
        (await post(`${gateways[0]!.url}/hooks/wake`, wake, { authorization: "Bearer wrong" })).status,
      ).toBe(401);
    });

    it("a rate limit is one budget over both gateways: 429 RATE_LIMITED from either once it is used up", async () => {
      const { gateways } = await twoGateways({
        limits: { wake: { rateLimit: { requests: 5, perSeconds: 600 } } },
      });
      const wake = JSON.stringify({ text: "hello" });
      const answers: Answer[] = [];
      for (let i = 0; i < 8; i++) answers.push(await post(`${gateways[i % 2]!.url}/hooks/wake`, wake, AUTH));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      for (const refused of answers.slice(5)) {
        expect(JSON.parse(refused.body).code).toBe("RATE_LIMITED");
        expect(Number(refused.retryAfter)).toBeGreaterThan(590);
        expect(Number(refused.retryAfter)).toBeLessThanOrEqual(600);
      }
      // The count is Redis's: one key for the client, expiring with the window.
      const { Redis } = await import("ioredis");
      const admin = new Redis(redis.url);
      try {
        const keys = await admin.keys(`test${prefixes}:rate:*`);
        expect(keys).toEqual([`test${prefixes}:rate:wake:600s:127.0.0.1`]);
        expect(await admin.get(keys[0]!)).toBe("8");
        expect(await admin.pttl(keys[0]!)).toBeGreaterThan(590_000);
      } finally {
        admin.disconnect();
      }
      for (const [index, gateway] of gateways.entries()) {
        const metrics = parseMetrics(await (await fetch(`${gateway.url}/metrics`)).text());
        const refusedHere = index === 0 ? 1 : 2;
        expect(sampleValue(metrics, "hooks_rate_limited_total", { hook: "wake", mapping: "" })).toBe(
          refusedHere,
        );
      }
    });

    it("Redis stopped mid-run: duplicates refused with 503, auth fails open, then both recover on their own", async () => {
      const { config, gateways } = await twoGateways({ authFailures: { limit: 2, windowSeconds: 600 } });
      const [a, b] = gateways;
      const wake = JSON.stringify({ text: "hello" });
      const keyed = (key: string) => ({ ...AUTH, "idempotency-key": key });
      expect((await post(`${a.url}/hooks/wake`, wake, keyed("before"))).status).toBe(200);
      expect((await post(`${b.url}/hooks/wake`, wake, keyed("before"))).replay).toBe(true);

      await redis.stop();
      for (const gateway of gateways) {
        await gateway.waitForLog((line) => String(line.msg).includes("is unreachable"));
      }
      // Never accepted twice: a request with an id is refused while the ids cannot be checked.
      for (const gateway of gateways) {
        const refused = await post(`${gateway.url}/hooks/wake`, wake, keyed("during"));
        expect(refused.status).toBe(503);
        expect(JSON.parse(refused.body).code).toBe("UNAVAILABLE");
        expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      }
      // Requests without an id are not held up; wrong tokens are refused but never throttled (limit 2).
      expect((await post(`${a.url}/hooks/wake`, wake, AUTH)).status).toBe(200);
      for (let i = 0; i < 4; i++) {
        expect((await post(`${b.url}/hooks/wake`, wake, { authorization: "Bearer wrong" })).status).toBe(401);
      }
      await b.waitForLog((line) => String(line.msg).includes("auth failures cannot be counted"));
      const metrics = parseMetrics(await (await fetch(`${b.url}/metrics`)).text());
      expect(sampleValue(metrics, "hooks_store_failures_total", { operation: "claim" })).toBe(1);
      expect(sampleValue(metrics, "hooks_store_failures_total", { operation: "count" })).toBe(4);
      const check = await runCli(["check", "--config", config]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(`shared store redis://127.0.0.1:${redis.port} is unreachable`);

      await redis.start();
      // The server came back empty: each gateway puts its ids back before its duplicate checks resume.
      for (const gateway of gateways) {
        await gateway.waitForLog((line) => String(line.msg).includes("duplicate checks resume"), 15_000);
      }
      expect((await post(`${a.url}/hooks/wake`, wake, keyed("before"))).replay).toBe(true);
      const first = await post(`${b.url}/hooks/wake`, wake, keyed("after"));
      expect(first).toMatchObject({ status: 200, replay: false });
      expect(await post(`${a.url}/hooks/wake`, wake, keyed("after"))).toMatchObject({
        status: 200,
        replay: true,
      });
      for (let i = 0; i < 2; i++) {
        expect((await post(`${a.url}/hooks/wake`, wake, { authorization: "Bearer wrong" })).status).toBe(401);
      }
      expect((await post(`${b.url}/hooks/wake`, wake, { authorization: "Bearer wrong" })).status).toBe(429);
      const healthy = await runCli(["check", "--config", config]);
      expect(healthy.code).toBe(0);
      expect(healthy.stdout).toMatch(
        new RegExp(`store redis redis://127\\.0\\.0\\.1:${redis.port} \\(keys test\\d+:\\*\\)`),
      );
      // Neither gateway's log carries the hook token, through all of the outage's warnings.
      for (const gateway of gateways) expect(gateway.stdout()).not.toContain("gateway-test-token");
    });

    /**
     * Accepts `count` wakes with ids, alternating gateways: each id's first answer and the gateway that gave it.
     * Each wake's text names its delivery, so the record shows whether one ran twice.
     */
    async function acceptDeliveries(gateways: readonly Serve[], label: string, count: number) {
      return inFlight(
        Array.from({ length: count }, (_, i) => async () => {
          const key = `${label}-${i}`;
          const body = JSON.stringify({ text: `delivery ${key}` });
          const first = i % gateways.length;
          const answer = await post(`${gateways[first]!.url}/hooks/wake`, body, {
            ...AUTH,
            "idempotency-key": key,
          });
          expect(answer).toMatchObject({ status: 200, replay: false });
          return { key, body, first, answer: answer.body };
        }),
        20,
      );
    }

    /**
     * Sends every delivery again, each to the gateway that did not accept it, until each is answered as a duplicate
     * (bounded): every answer must be that or a 503 with Retry-After, never a first acceptance.
     */
    async function resendUntilReplayed(
      gateways: readonly Serve[],
      deliveries: Awaited<ReturnType<typeof acceptDeliveries>>,
    ) {
      let pending = deliveries;
      let refused = 0;
      const acceptedAgain: string[] = [];
      const deadline = Date.now() + 20_000;
      while (pending.length > 0 && Date.now() < deadline) {
        const answers = await inFlight(
          pending.map((delivery) => async () => {
            const gateway = gateways[(delivery.first + 1) % gateways.length]!;
            const answer = await post(`${gateway.url}/hooks/wake`, delivery.body, {
              ...AUTH,
              "idempotency-key": delivery.key,
            });
            return { delivery, answer };
          }),
          20,
        );
        pending = [];
        for (const { delivery, answer } of answers) {
          if (answer.status === 503) {
            expect(JSON.parse(answer.body).code).toBe("UNAVAILABLE");
            expect(Number(answer.retryAfter)).toBeGreaterThan(0);
            refused++;
            pending.push(delivery);
          } else if (answer.status === 200 && answer.replay) {
            expect(answer.body).toBe(delivery.answer);
          } else {
            acceptedAgain.push(`${delivery.key}: ${answer.status}`);
          }
        }
        // A pause between rounds while refused: the gateways are putting the ids back.
        if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { acceptedAgain, refused, unanswered: pending.length };
    }

    /** How many wakes each delivery caused, over both gateways' records. */
    function wakesPerDelivery(records: readonly string[]) {
      const counts = new Map<string, number>();
      for (const line of records.flatMap((record) => readRecord(record))) {
        if (line.event !== "session:system-event") continue;
        const delivery = /delivery [\w-]+/.exec(String(line.payload.text))?.[0];
        if (delivery !== undefined) counts.set(delivery, (counts.get(delivery) ?? 0) + 1);
      }
      return counts;
    }

    it("Redis restarted empty under two running gateways: 200 earlier deliveries all answered as duplicates, 503 until their ids are back, none run twice", {
      timeout: BULK_TIMEOUT_MS,
    }, async () => {
      const { gateways } = await twoGateways();
      const deliveries = await acceptDeliveries(gateways, "restart", 200);
      await redis.stop();
      await redis.start();
      // Both are connected again: from here on only the lost ids stand between a copy and a second acceptance.
      for (const gateway of gateways) {
        await gateway.waitForLog((line) => String(line.msg).includes("is reachable again"), 15_000);
      }
      const started = Date.now();
      const { acceptedAgain, refused, unanswered } = await resendUntilReplayed(gateways, deliveries);
      expect(acceptedAgain).toEqual([]);
      expect(unanswered).toBe(0);
      // The window was there, and closed: refused first, then every copy got its first answer.
      expect(refused).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      for (const gateway of gateways) {
        await gateway.waitForLog((line) => String(line.msg).includes("lost its delivery ids"));
      }
      // A new id is accepted once, afterwards.
      const fresh = JSON.stringify({ text: "delivery after" });
      const first = await post(`${gateways[0].url}/hooks/wake`, fresh, {
        ...AUTH,
        "idempotency-key": "after",
      });
      expect(first).toMatchObject({ status: 200, replay: false });
      const copy = await post(`${gateways[1].url}/hooks/wake`, fresh, {
        ...AUTH,
        "idempotency-key": "after",
      });
      expect(copy).toMatchObject({ status: 200, replay: true });
      const wakes = wakesPerDelivery(gateways.map(({ record }) => record));
      for (const delivery of deliveries) expect(wakes.get(`delivery ${delivery.key}`)).toBe(1);
      expect(wakes.get("delivery after")).toBe(1);
    });

    it("Redis emptied by FLUSHALL under two running gateways: copies refused with 503 until the ids are back, then answered as duplicates", async () => {
      const { gateways } = await twoGateways();
      const deliveries = await acceptDeliveries(gateways, "flush", 50);
      const { Redis } = await import("ioredis");
      const admin = new Redis(redis.url);
      try {
        await admin.flushall();
      } finally {
        admin.disconnect();
      }
      const { acceptedAgain, refused, unanswered } = await resendUntilReplayed(gateways, deliveries);
      expect(acceptedAgain).toEqual([]);
      expect(unanswered).toBe(0);
      expect(refused).toBeGreaterThan(0);
      const wakes = wakesPerDelivery(gateways.map(({ record }) => record));
      for (const delivery of deliveries) expect(wakes.get(`delivery ${delivery.key}`)).toBe(1);
    });

    it("a restarted gateway puts the delivery ids of its journal back into a Redis that lost them", async () => {
      const { gateways, start } = await twoGateways();
      const [a, b] = gateways;
      const wake = JSON.stringify({ text: "hello" });
      const keys = Array.from({ length: 30 }, (_, i) => `restart-${i}`);
      for (const key of keys) {
        expect((await post(`${a.url}/hooks/wake`, wake, { ...AUTH, "idempotency-key": key })).status).toBe(
          200,
        );
      }
      // Redis restarts without persistence: every id is gone from it. Gateway a then restarts from its journal.
      await redis.stop();
      await redis.start();
      a.signal("SIGTERM");
      expect((await a.exited).code).toBe(0);
      const again = await start("a");
      await b.waitForLog((line) => String(line.msg).includes("duplicate checks resume"), 15_000);
      for (const key of keys) {
        const answer = await post(`${b.url}/hooks/wake`, wake, { ...AUTH, "idempotency-key": key });
        expect(answer).toMatchObject({ status: 200, replay: true });
      }
      expect(
        (await post(`${again.url}/hooks/wake`, wake, { ...AUTH, "idempotency-key": "new" })).replay,
      ).toBe(false);
    });
  },
);

/** @module The Redis Store against a real redis-server: atomic counters and claims across two clients, expiry, bulk memory, outages. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HostLogger } from "../../src/host/contract.js";
import { probeRedis, RedisStore } from "../../src/store/redis.js";
import type { StoredResponse } from "../../src/store/store.js";
import { pollFor } from "../helpers/cli.js";
import { type RedisServer, redisSkipReason, startRedis } from "../helpers/redis-server.js";

const skipReason = redisSkipReason();
const ANSWER: StoredResponse = {
  status: 202,
  contentType: "application/json; charset=utf-8",
  body: '{"ok":true}',
};
const TIMES = { holdMs: 60_000, waitMs: 0 };

interface Line {
  level: string;
  message: string;
  fields?: Record<string, unknown> | undefined;
}

function recordingLogger(lines: Line[]): HostLogger {
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, fields });
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

describe.skipIf(skipReason !== undefined)(
  `RedisStore on a real redis-server${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let server: RedisServer;
    const stores: RedisStore[] = [];
    let prefixes = 0;

    /** A store of its own (a gateway's connection); `prefix` shares keys with another store when given. */
    async function openStore(lines: Line[] = [], prefix = `t${++prefixes}:`, timeoutMs = 1_000) {
      const store = new RedisStore({
        url: server.url,
        keyPrefix: prefix,
        timeoutMs,
        logger: recordingLogger(lines),
        pollMs: { first: 5, max: 20 },
        // Claims stay refused this long after a loss is noticed (a gateway's default is about 3 s).
        gatherMs: 200,
      });
      stores.push(store);
      await store.open();
      return store;
    }

    beforeAll(async () => {
      server = await startRedis();
    });
    afterEach(async () => {
      await Promise.all(stores.splice(0).map((store) => store.close()));
      if (server.pid === undefined) await server.start();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("counts atomically across two clients, in a window that starts with the first hit and expires", async () => {
      const a = await openStore([], "shared-counter:");
      const b = await openStore([], "shared-counter:");
      const before = Date.now();
      const windows = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).increment("auth-failures:1.2.3.4", 2_000)),
      );
      const after = Date.now();
      expect(windows.map((window) => window.count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      // One window for all forty, started by the first hit: no later hit moves its end.
      for (const window of windows) {
        expect(window.resetAt).toBeGreaterThan(before);
        expect(window.resetAt).toBeLessThanOrEqual(after + 2_000);
      }
      const ends = windows.map((window) => window.resetAt);
      expect(Math.max(...ends) - Math.min(...ends)).toBeLessThan(after - before + 50);
      // Once it ends, counting starts again at one (the expiry is the server's: wait it out).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.max(...ends) - Date.now() + 50)));
      expect((await a.increment("auth-failures:1.2.3.4", 2_000)).count).toBe(1);
      await b.reset("auth-failures:1.2.3.4");
      expect((await a.increment("auth-failures:1.2.3.4", 2_000)).count).toBe(1);
    });

    it("clears a count at once, then skips further clears of that address for a second unless it counts a failure", async () => {
      const a = await openStore([], "shared-resets:");
      const b = await openStore([], "shared-resets:");
      const deletes = async () => {
        const { Redis } = await import("ioredis");
        const admin = new Redis(server.url);
        try {
          const stats = await admin.info("commandstats");
          return Number(/cmdstat_del:calls=(\d+)/.exec(stats)?.[1] ?? 0);
        } finally {
          admin.disconnect();
        }
      };
      for (let i = 0; i < 5; i++) await a.increment("auth-failures:9.9.9.9", 60_000);
      const before = await deletes();
      // A success on the other gateway clears what this one counted, at once.
      await b.reset("auth-failures:9.9.9.9");
      expect((await a.increment("auth-failures:9.9.9.9", 60_000)).count).toBe(1);
      // A hundred more successes on b within the second: no further DEL.
      for (let i = 0; i < 100; i++) await b.reset("auth-failures:9.9.9.9");
      expect((await deletes()) - before).toBe(1);
      // A failure b counts itself ends its quiet time: its next success clears again.
      await b.increment("auth-failures:9.9.9.9", 60_000);
      await b.reset("auth-failures:9.9.9.9");
      expect((await deletes()) - before).toBe(2);
      expect((await a.increment("auth-failures:9.9.9.9", 60_000)).count).toBe(1);
    });

    it("of fifty simultaneous claims from two clients exactly one is first; the others get its answer", async () => {
      const a = await openStore([], "shared-claims:");
      const b = await openStore([], "shared-claims:");
      const waiting = { holdMs: 60_000, waitMs: 5_000 };
      const claims = Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? a : b).claimDelivery("d:1", waiting),
      );
      // Every claim has reached the server before the first one settles: the later ones are waiting.
      const first = await Promise.race(claims);
      expect(first.state).toBe("first");
      if (first.state !== "first") return;
      await a.settleDelivery("d:1", first.claim, ANSWER, 60_000);
      const all = await Promise.all(claims);
      expect(all.filter((claim) => claim.state === "first")).toHaveLength(1);
      expect(all.filter((claim) => claim.state === "answered")).toHaveLength(49);
      for (const claim of all) if (claim.state === "answered") expect(claim.response).toEqual(ANSWER);
    });

    it("settles only for the claim's owner; a released id is first again; prefixes keep deployments apart", async () => {
      const store = await openStore([], "owned:");
      const owner = await store.claimDelivery("d:2", TIMES);
      if (owner.state !== "first") throw new Error("expected first");
      // Another gateway's stale claim (one that outlived its hold) answers: the owner's claim stays. (The answering
      // gateway keeps its answer for its own copies; the store tested here only knows what the server holds.)
      const stale = await openStore([], "owned:");
      await stale.settleDelivery("d:2", "someone-else", ANSWER, 60_000);
      expect(await store.claimDelivery("d:2", TIMES)).toEqual({ state: "in-progress" });
      await store.settleDelivery("d:2", owner.claim, undefined, 60_000);
      const again = await store.claimDelivery("d:2", TIMES);
      expect(again.state).toBe("first");
      const other = await openStore();
      expect((await other.claimDelivery("d:2", TIMES)).state).toBe("first");
    });

    it("an unanswered claim lapses after its hold; an answer after its window", async () => {
      const store = await openStore();
      await store.claimDelivery("d:3", { holdMs: 300, waitMs: 0 });
      expect((await store.claimDelivery("d:3", TIMES)).state).toBe("in-progress");
      // Expiry is the server's clock: wait out the hold, then the id is free again.
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await store.claimDelivery("d:3", TIMES)).state).toBe("first");
      const owner = await store.claimDelivery("d:4", TIMES);
      if (owner.state !== "first") throw new Error("expected first");
      await store.settleDelivery("d:4", owner.claim, ANSWER, 300);
      expect((await store.claimDelivery("d:4", TIMES)).state).toBe("answered");
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await store.claimDelivery("d:4", TIMES)).state).toBe("first");
    });

    it("remembers answers in bulk, leaving ids it already holds alone", async () => {
      const store = await openStore();
      const held = await store.claimDelivery("d:held", TIMES);
      if (held.state !== "first") throw new Error("expected first");
      await store.settleDelivery("d:held", held.claim, { ...ANSWER, status: 200 }, 60_000);
      const answers = Array.from({ length: 1_234 }, (_, i) => ({
        key: i === 7 ? "d:held" : `d:bulk-${i}`,
        response: ANSWER,
        keepMs: 60_000,
      }));
      expect(await store.rememberDeliveries(answers)).toBe(1_233);
      expect(await store.rememberDeliveries(answers)).toBe(0);
      expect(await store.claimDelivery("d:bulk-1233", TIMES)).toEqual({
        state: "answered",
        response: ANSWER,
      });
      expect(await store.claimDelivery("d:held", TIMES)).toEqual({
        state: "answered",
        response: { ...ANSWER, status: 200 },
      });
    });

    it("a restart's remembered answer replaces the crashed run's own claim, and leaves an answer alone", async () => {
      const store = await openStore();
      // The crashed run claimed the id and wrote its journal, then died before settling.
      await store.claimDelivery("d:crashed", TIMES);
      expect(await store.rememberDeliveries([{ key: "d:crashed", response: ANSWER, keepMs: 60_000 }])).toBe(
        1,
      );
      expect(await store.claimDelivery("d:crashed", TIMES)).toEqual({ state: "answered", response: ANSWER });
    });

    it("an answer settled after the id vanished (Redis restarted) is still kept; a release is not", async () => {
      const store = await openStore([], "vanish:");
      const owner = await store.claimDelivery("d:7", TIMES);
      const other = await store.claimDelivery("d:8", TIMES);
      if (owner.state !== "first" || other.state !== "first") throw new Error("expected first");
      const { Redis } = await import("ioredis");
      const admin = new Redis(server.url);
      await admin.del("vanish:d:7", "vanish:d:8");
      admin.disconnect();
      await store.settleDelivery(
        "d:7",
        owner.claim,
        { status: 204, contentType: undefined, body: undefined },
        60_000,
      );
      await store.settleDelivery("d:8", other.claim, undefined, 60_000);
      expect(await store.claimDelivery("d:7", TIMES)).toEqual({
        state: "answered",
        response: { status: 204 },
      });
      expect((await store.claimDelivery("d:8", TIMES)).state).toBe("first");
    });

    it("ids it could not remember while the server was down go in once the server is back", async () => {
      await server.stop();
      const lines: Line[] = [];
      const store = await openStore(lines);
      await expect(
        store.rememberDeliveries([{ key: "d:late", response: ANSWER, keepMs: 60_000 }]),
      ).rejects.toThrow();
      await server.start();
      await pollFor(
        () => (lines.some((line) => line.message.includes("put back")) ? true : undefined),
        "the put-back",
        10_000,
      );
      expect(await store.claimDelivery("d:late", TIMES)).toEqual({ state: "answered", response: ANSWER });
    });

    it("a stopped server: every call fails at once, one warning; back on its own when the server returns", async () => {
      const lines: Line[] = [];
      const store = await openStore(lines);
      await server.stop();
      await pollFor(() => (lines.some((line) => line.level === "warn") ? true : undefined), "the warning");
      const started = Date.now();
      await expect(store.claimDelivery("d:5", TIMES)).rejects.toThrow();
      await expect(store.increment("c", 1_000)).rejects.toThrow();
      await expect(store.reset("c")).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(500);
      const warnings = lines.filter((line) => line.level === "warn");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(`127.0.0.1:${server.port}`);

      await server.start();
      await pollFor(
        () => (lines.some((line) => line.message.includes("duplicate checks resume")) ? true : undefined),
        "the reconnect and the put-back",
        10_000,
      );
      expect(lines.some((line) => line.message.includes("reachable again"))).toBe(true);
      expect((await store.claimDelivery("d:5", TIMES)).state).toBe("first");
    });

    /** Claims and answers `count` ids on `store`, each answered with its own body. */
    async function answerIds(store: RedisStore, label: string, count: number) {
      for (let i = 0; i < count; i++) {
        const claim = await store.claimDelivery(`d:${label}-${i}`, TIMES);
        if (claim.state !== "first") throw new Error(`expected first for ${label}-${i}`);
        await store.settleDelivery(
          `d:${label}-${i}`,
          claim.claim,
          { ...ANSWER, body: `${label}-${i}` },
          60_000,
        );
      }
    }

    async function admin<T>(use: (redis: import("ioredis").Redis) => Promise<T>): Promise<T> {
      const { Redis } = await import("ioredis");
      const redis = new Redis(server.url);
      try {
        return await use(redis);
      } finally {
        redis.disconnect();
      }
    }

    it("a server emptied under two stores: claims refused on both until each put its ids back, then every id answered, a claim in progress still in progress", async () => {
      const aLines: Line[] = [];
      const bLines: Line[] = [];
      const a = await openStore(aLines, "emptied:");
      const b = await openStore(bLines, "emptied:");
      await answerIds(a, "a", 30);
      await answerIds(b, "b", 30);
      const running = await b.claimDelivery("d:running", TIMES);
      expect(running.state).toBe("first");
      await admin((redis) => redis.flushall());
      // The very next claim, on either store, is refused: nothing is taken from a server that lost its ids.
      await expect(a.claimDelivery("d:b-0", TIMES)).rejects.toThrow(/delivery ids/);
      await expect(b.claimDelivery("d:a-0", TIMES)).rejects.toThrow(/delivery ids/);
      // b finds out by itself too (its periodic look), though nothing reached it.
      for (const lines of [aLines, bLines]) {
        await pollFor(
          () => (lines.some((line) => line.message.includes("duplicate checks resume")) ? true : undefined),
          "the put-back",
          5_000,
        );
      }
      for (let i = 0; i < 30; i++) {
        expect(await b.claimDelivery(`d:a-${i}`, TIMES)).toEqual({
          state: "answered",
          response: { ...ANSWER, body: `a-${i}` },
        });
        expect(await a.claimDelivery(`d:b-${i}`, TIMES)).toEqual({
          state: "answered",
          response: { ...ANSWER, body: `b-${i}` },
        });
      }
      expect(await a.claimDelivery("d:running", TIMES)).toEqual({ state: "in-progress" });
      expect((await a.claimDelivery("d:new", TIMES)).state).toBe("first");
    });

    it("ids deleted one at a time: the store answers from what it holds and writes it back; its claim in progress is put back and waited for", async () => {
      const store = await openStore([], "deleted:");
      await answerIds(store, "x", 5);
      const running = await store.claimDelivery("d:running", TIMES);
      if (running.state !== "first") throw new Error("expected first");
      await admin((redis) => redis.del("deleted:d:x-3", "deleted:d:running"));

      expect(await store.claimDelivery("d:x-3", TIMES)).toEqual({
        state: "answered",
        response: { ...ANSWER, body: "x-3" },
      });
      expect(await admin((redis) => redis.get("deleted:d:x-3"))).toBe(
        `!${JSON.stringify({ ...ANSWER, body: "x-3" })}`,
      );
      // A copy of the running request finds it in progress again, the running one's own claim back in place, which
      // then settles as if nothing had happened.
      expect(await store.claimDelivery("d:running", TIMES)).toEqual({ state: "in-progress" });
      expect(await admin((redis) => redis.get("deleted:d:running"))).toBe(`?${running.claim}`);
      await store.settleDelivery("d:running", running.claim, ANSWER, 60_000);
      expect(await store.claimDelivery("d:running", TIMES)).toEqual({ state: "answered", response: ANSWER });
      expect((await store.claimDelivery("d:never", TIMES)).state).toBe("first");
    });

    it("a real restart of the server: the store notices at its reconnect and puts its ids back", async () => {
      const lines: Line[] = [];
      const store = await openStore(lines, "restarted:");
      await answerIds(store, "r", 20);
      await server.stop();
      await server.start();
      await pollFor(
        () => (lines.some((line) => line.message.includes("duplicate checks resume")) ? true : undefined),
        "the put-back",
        10_000,
      );
      expect(lines.some((line) => line.message.includes("lost its delivery ids"))).toBe(true);
      expect(await store.claimDelivery("d:r-19", TIMES)).toEqual({
        state: "answered",
        response: { ...ANSWER, body: "r-19" },
      });
    });

    it("a server that kept its keys (or a reconnect after a network cut) costs no put-back", async () => {
      const lines: Line[] = [];
      const store = await openStore(lines, "kept:");
      await answerIds(store, "k", 5);
      await admin((redis) => redis.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"));
      await pollFor(
        () => (lines.some((line) => line.message.includes("reachable again")) ? true : undefined),
        "the reconnect",
        10_000,
      );
      // "reachable again" is logged as the connection comes back, before the store's look at the server's
      // generation is answered: a claim made meanwhile waits for that look.
      expect((await store.claimDelivery("d:k-0", TIMES)).state).toBe("answered");
      expect(lines.some((line) => line.message.includes("put back"))).toBe(false);
    });

    it("a claim made while the store looks at the server's generation after a reconnect waits for the look, not refused", async () => {
      const lines: Line[] = [];
      let store: RedisStore | undefined;
      let during: Promise<unknown> | undefined;
      // The claim is made right after the reconnect starts its look (the look's command is on its way, not yet
      // answered): the moment a delivery arriving then would have been refused with a 503.
      const record = lines.push.bind(lines);
      lines.push = (...added: Line[]) => {
        if (added.some((line) => line.message.includes("reachable again"))) {
          queueMicrotask(() => {
            during = store!.claimDelivery("d:w-0", TIMES).then(
              (claim) => claim.state,
              (error: Error) => error.message,
            );
          });
        }
        return record(...added);
      };
      store = await openStore(lines, "looked:");
      await answerIds(store, "w", 1);
      await admin((redis) => redis.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"));
      await pollFor(() => during, "the claim made during the reconnect's look", 10_000);
      expect(await during).toBe("answered");
    });

    it("puts 10,000 ids back within a second", async () => {
      const lines: Line[] = [];
      const store = await openStore(lines, "many:");
      const answers = Array.from({ length: 10_000 }, (_, i) => ({
        key: `d:many-${i}`,
        response: { ...ANSWER, body: `{"ok":true,"eventId":"${String(i).padStart(36, "0")}"}` },
        keepMs: 600_000,
      }));
      expect(await store.rememberDeliveries(answers)).toBe(10_000);
      await admin((redis) => redis.flushall());
      const flushed = Date.now();
      await expect(store.claimDelivery("d:many-0", TIMES)).rejects.toThrow(/delivery ids/);
      const done = await pollFor(
        () => lines.find((line) => line.message.includes("duplicate checks resume")),
        "the put-back",
        10_000,
        5,
      );
      const took = Date.now() - flushed;
      console.log(
        `10,000 ids: put back in ${done.fields?.ms} ms; claims refused for ${took} ms (gather 200 ms)`,
      );
      expect(done.fields).toMatchObject({ remembered: 10_000 });
      expect(done.fields?.ms).toBeLessThan(1_000);
      expect(await admin((redis) => redis.dbsize())).toBeGreaterThanOrEqual(10_000);
      expect((await store.claimDelivery("d:many-9999", TIMES)).state).toBe("answered");
    });

    it("a server that stops answering: calls fail after the timeout; a claim it carries out late is released", async () => {
      const store = await openStore([], undefined, 300);
      expect((await store.increment("c", 10_000)).count).toBe(1);
      const pid = server.pid!;
      process.kill(pid, "SIGSTOP");
      try {
        const started = Date.now();
        await expect(store.claimDelivery("d:6", TIMES)).rejects.toThrow(/timed out/i);
        expect(Date.now() - started).toBeLessThan(1_500);
      } finally {
        process.kill(pid, "SIGCONT");
      }
      expect((await store.claimDelivery("d:6", TIMES)).state).toBe("first");
    });

    it("a server that says nothing at start holds up open() only for the connect bound", async () => {
      const pid = server.pid!;
      process.kill(pid, "SIGSTOP");
      const lines: Line[] = [];
      let store: RedisStore;
      try {
        const started = Date.now();
        store = await openStore(lines, undefined, 300);
        expect(Date.now() - started).toBeLessThan(3_500);
        expect(lines.filter((line) => line.level === "warn")).toHaveLength(1);
      } finally {
        process.kill(pid, "SIGCONT");
      }
      await pollFor(
        () => (lines.some((line) => line.level === "info") ? true : undefined),
        "the reconnect",
        10_000,
      );
      expect((await store.increment("c", 1_000)).count).toBe(1);
    });

    it("never puts the URL's password in a log line", async () => {
      await server.stop();
      const lines: Line[] = [];
      const store = new RedisStore({
        url: `redis://user:hunter2-secret@127.0.0.1:${server.port}/0`,
        keyPrefix: "x:",
        timeoutMs: 200,
        logger: recordingLogger(lines),
      });
      stores.push(store);
      await store.open();
      const probed = await probeRedis({
        url: `redis://:hunter2-secret@127.0.0.1:${server.port}`,
        keyPrefix: "",
        timeoutMs: 200,
      });
      expect(probed.problem).toMatch(/unreachable/);
      expect(lines.length).toBeGreaterThan(0);
      for (const text of [probed.problem!, ...lines.map((line) => line.message)])
        expect(text).not.toContain("hunter2");
    });
  },
);

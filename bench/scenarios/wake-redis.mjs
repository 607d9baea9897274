/**
 * @module Scenario: /wake with the Redis store (`hooks.store: { kind: "redis" }`, ioredis) against the bare baseline
 * and against the default memory store, in the same rounds (`runRounds`, BENCH_PAIRS of them, the order turned by
 * one each round; every ratio against a side of its own round). Target: the Redis side at least 0.45x the bare
 * baseline's req/s (not a lean-core row; its ratio to the durable baseline, measured in the same rounds, is
 * information). Reported beside it: its server CPU per request against the baseline's, the Redis store's cost
 * per request (µs of gateway CPU, Redis side minus memory side, round by round), and the redis-server's own CPU
 * per request (diagnostic: /proc/<pid>/stat over exactly each Redis side's run).
 *
 * Plain /wake carries no delivery id, so the store's only work is the `reset` of the address's auth-failure
 * counter that every authenticated request starts without waiting for it: one DEL per request. The keyed sides
 * send a new `Idempotency-Key` on every request (a claim and a settle, two Lua scripts, on top): the Redis store's
 * and, diagnostic, the memory store's, each checked afterwards to have emitted one wake per answered request (no
 * request was taken for a replay). BENCH_DIAGNOSTICS=0 leaves out the memory store's keyed side.
 *
 * The scenario starts its own redis-server (bench/lib/redis-server.mjs: a free loopback port, nothing persisted),
 * pinned to the load generator's core: Redis is another service, not the gateway's CPU. Each Redis gateway has a
 * key prefix of its own. BENCH_REDIS_OTHER_BIN=<build>/bin/hooks.js adds a side: the Redis store on that build
 * (an A/B of a store change in the same rounds, against the Redis side of this one).
 */
import path from "node:path";
import { jsonRequest, WAKE_BODY, writeStoreConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { checkAllFirst, checkReplay } from "../lib/deliveries.mjs";
import { pairsOf, runRounds, stats } from "../lib/load.mjs";
import { startRedisServer } from "../lib/redis-server.mjs";
import { pairRows, valueRow } from "../lib/report.mjs";

const round1 = (value) => Math.round(value * 10) / 10;
const ORDER = ["memory", "redis", "baseline", "durable", "memory-key", "redis-key", "redis-other"];
const REDIS_SIDES = ["redis", "redis-key", "redis-other"];

function spread(values) {
  const s = stats(values);
  return { min: round1(s.min), median: round1(s.median), max: round1(s.max), all: values.map(round1) };
}

/** µs of gateway CPU per request, `a` minus `b`, round by round. */
function difference(rounds, a, b) {
  return spread(rounds.map((round) => round[a].serverCpuUsPerRequest - round[b].serverCpuUsPerRequest));
}

/** What the server executed between two `INFO commandstats`, by command: calls and its own µs per call. */
function commandDelta(before, after) {
  const delta = {};
  for (const [name, { calls, usec }] of Object.entries(after)) {
    const was = before[name] ?? { calls: 0, usec: 0 };
    if (calls === was.calls) continue;
    const n = calls - was.calls;
    delta[name] = { calls: n, usecPerCall: Math.round(((usec - was.usec) / n) * 100) / 100 };
  }
  return delta;
}

export const scenario = {
  id: "wake-redis",
  title: "/wake with the Redis store vs the memory store and the baseline",
  async run(context) {
    const { diagnostics, connections } = context.settings;
    const plain = jsonRequest(context.token, "wake", WAKE_BODY);
    const keyed = { ...plain, uniqueHeaders: ["idempotency-key"] };
    const otherBin = process.env.BENCH_REDIS_OTHER_BIN
      ? path.resolve(process.env.BENCH_REDIS_OTHER_BIN)
      : undefined;
    const redis = await startRedisServer();
    context.log(`  ${redis.version.split(" ").slice(0, 3).join(" ")}, pid ${redis.pid}, ${redis.url}`);
    const started = [];
    const answered = {};
    const runs = {};
    let rounds;
    let keyedGateways;
    let commands;
    let keys;
    let hooksClients = 0;
    try {
      const baseline = await context.baseline();
      const gateway = async (label, configFile, bin) => {
        const handle = await context.startGateway({ label, configFile, ...(bin ? { bin } : {}) });
        started.push(handle);
        context.log(`  ${label} ready in ${Math.round(handle.readyMs)} ms at ${handle.url}`);
        return handle;
      };
      const memoryConfig = writeStoreConfig(context.dir, context.token, { kind: "memory" }, "memory");
      const redisConfig = (prefix) =>
        writeStoreConfig(
          context.dir,
          context.token,
          { kind: "redis", url: redis.url, keyPrefix: `${prefix}:` },
          prefix,
        );
      const onRedis = { alsoPids: [redis.pid] };
      const sides = [
        { name: "baseline", server: baseline, request: plain, expectStatus: 200 },
        { name: "durable", server: await context.durableBaseline(), request: plain, expectStatus: 200 },
        {
          name: "memory",
          server: await gateway("gateway (memory store)", memoryConfig),
          request: plain,
          expectStatus: 200,
        },
        {
          name: "redis",
          server: await gateway("gateway (Redis store)", redisConfig("bench-redis")),
          request: plain,
          expectStatus: 200,
          measureOptions: onRedis,
        },
        {
          name: "redis-key",
          server: await gateway("gateway (Redis store, Idempotency-Key)", redisConfig("bench-redis-key")),
          request: keyed,
          expectStatus: 200,
          measureOptions: onRedis,
        },
      ];
      if (diagnostics) {
        sides.push({
          name: "memory-key",
          server: await gateway("gateway (memory store, Idempotency-Key)", memoryConfig),
          request: keyed,
          expectStatus: 200,
        });
      }
      if (otherBin) {
        sides.push({
          name: "redis-other",
          server: await gateway(
            `gateway (Redis store, ${otherBin})`,
            redisConfig("bench-redis-other"),
            otherBin,
          ),
          request: plain,
          expectStatus: 200,
          measureOptions: onRedis,
        });
      }
      sides.sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name));
      keyedGateways = sides.filter((side) => side.request === keyed);
      // Every keyed gateway takes the duplicate check at all: one id twice, the second a replay.
      for (const side of keyedGateways) await checkReplay(side.server, keyed, 200);
      const statsBefore = await redis.commandStats();
      context.log(
        `  rounds of ${sides.map((side) => side.name).join(", ")} (${context.settings.pairs} rounds)`,
      );
      rounds = await runRounds({
        sides,
        rounds: context.settings.pairs,
        settings: context.settings,
        log: context.log,
        onRun: (side, run) => {
          answered[side.name] = (answered[side.name] ?? 0) + run.requests;
          runs[side.name] = (runs[side.name] ?? 0) + 1;
        },
      });
      commands = commandDelta(statsBefore, await redis.commandStats());
      keys = await redis.dbsize();
      hooksClients = String(await redis.command("CLIENT", "LIST"))
        .split("\n")
        .filter((line) => / name=hooks /.test(line)).length;
      for (const round of rounds) {
        context.log(
          "    redis-server CPU per request: " +
            REDIS_SIDES.filter((name) => round[name])
              .map((name) => `${name} ${round[name].alsoCpuUsPerRequest[0].toFixed(1)} µs`)
              .join(", "),
        );
      }
    } finally {
      // Gateways first (a graceful stop ends the store's connection with QUIT), then the server, by its PID.
      await Promise.all(started.map((handle) => handle.stop()));
      await redis.stop();
    }

    // The store did its work: every Redis gateway was connected (a plain /wake sends Redis at most one DEL a second
    // per client address, so a command count cannot show it), and the keyed side claimed a key per request.
    const redisGateways = REDIS_SIDES.filter((name) => answered[name] !== undefined).length;
    context.log(
      `  redis-server executed, by command: ${Object.entries(commands)
        .map(([name, { calls, usecPerCall }]) => `${name} ${calls} (${usecPerCall} µs each)`)
        .join(", ")}; ${keys} keys at the end; ${hooksClients} gateway connections`,
    );
    if (hooksClients < redisGateways) {
      throw new Error(
        `redis-server had ${hooksClients} gateway connections for ${redisGateways} Redis gateways: a gateway did not use the store`,
      );
    }
    if (keys < answered["redis-key"]) {
      throw new Error(`redis-server holds ${keys} keys for ${answered["redis-key"]} keyed requests answered`);
    }
    for (const side of keyedGateways) {
      const wakes = checkAllFirst(side.server, {
        answered: answered[side.name],
        runs: runs[side.name],
        connections,
      });
      context.log(
        `  ${side.name}: ${wakes} wakes for ${answered[side.name]} answered keyed requests: every one a first delivery`,
      );
    }

    const redisCpu = (name) => rounds.map((round) => round[name].alsoCpuUsPerRequest[0]);
    const redisExtra = difference(rounds, "redis", "memory");
    const redisCommon = { redisServer: redis.version, redisCommands: commands, redisKeysAtEnd: keys };
    context.log(
      `  Redis store - memory store: ${redisExtra.median} µs gateway CPU per request (${redisExtra.min} to ${redisExtra.max})`,
    );
    const rows = [
      ...pairRows({
        id: "wake-redis",
        title: "/wake, Redis store",
        pairs: pairsOf(rounds, "redis", "baseline"),
        rpsTarget: 0.45,
        p99Target: null,
        baselineName: "bare node:http",
        extra: { ...redisCommon, redisConnections: hooksClients },
      }),
      ...pairRows({
        id: "wake-redis.durable",
        title: "/wake, Redis store vs durable baseline",
        pairs: pairsOf(rounds, "redis", "durable"),
        p99Target: null,
        baselineName: "durable baseline",
      }),
    ];
    if (!diagnostics) return rows;
    rows.push(
      ...pairRows({
        id: "wake-redis.memory",
        title: "/wake, memory store, same rounds (diagnostic)",
        pairs: pairsOf(rounds, "memory", "baseline"),
        p99Target: null,
        baselineName: "bare node:http",
      }),
      ...pairRows({
        id: "wake-redis.redis-vs-memory",
        title: "/wake, Redis store vs memory store (diagnostic)",
        pairs: pairsOf(rounds, "redis", "memory"),
        p99Target: null,
        baselineName: "memory store",
        extra: { redisExtraUsPerRequest: redisExtra },
      }).filter((row) => !row.id.endsWith(".p99")),
      valueRow({
        id: "wake-redis.redis-extra-us",
        title: "/wake: Redis store's gateway CPU per request minus the memory store's (diagnostic)",
        value: redisExtra.median,
        unit: "µs",
        values: redisExtra.all,
      }),
      valueRow({
        id: "wake-redis.redis-server-cpu",
        title: "/wake, Redis store: redis-server CPU per request (diagnostic)",
        value: stats(redisCpu("redis")).median,
        unit: "µs",
        values: redisCpu("redis"),
      }),
      ...pairRows({
        id: "wake-redis.key",
        title: "/wake + Idempotency-Key, Redis store (diagnostic)",
        pairs: pairsOf(rounds, "redis-key", "baseline"),
        p99Target: null,
        baselineName: "bare node:http, no key",
        extra: { keyedRequests: answered["redis-key"] },
      }),
      ...pairRows({
        id: "wake-redis.key-memory",
        title: "/wake + Idempotency-Key, memory store (diagnostic)",
        pairs: pairsOf(rounds, "memory-key", "baseline"),
        p99Target: null,
        baselineName: "bare node:http, no key",
        extra: { keyedRequests: answered["memory-key"] },
      }),
    );
    const keyExtra = difference(rounds, "redis-key", "memory-key");
    context.log(
      `  with Idempotency-Key, Redis store - memory store: ${keyExtra.median} µs gateway CPU per request (${keyExtra.min} to ${keyExtra.max})`,
    );
    rows.push(
      ...pairRows({
        id: "wake-redis.key-vs-memory-key",
        title: "/wake + Idempotency-Key, Redis store vs memory store (diagnostic)",
        pairs: pairsOf(rounds, "redis-key", "memory-key"),
        p99Target: null,
        baselineName: "memory store, Idempotency-Key",
        extra: { redisExtraUsPerRequest: keyExtra },
      }).filter((row) => !row.id.endsWith(".p99")),
      valueRow({
        id: "wake-redis.key-redis-extra-us",
        title:
          "/wake + Idempotency-Key: Redis store's gateway CPU per request minus the memory store's (diagnostic)",
        value: keyExtra.median,
        unit: "µs",
        values: keyExtra.all,
      }),
      valueRow({
        id: "wake-redis.key-redis-server-cpu",
        title: "/wake + Idempotency-Key, Redis store: redis-server CPU per request (diagnostic)",
        value: stats(redisCpu("redis-key")).median,
        unit: "µs",
        values: redisCpu("redis-key"),
      }),
    );
    if (otherBin) {
      const otherExtra = difference(rounds, "redis-other", "redis");
      context.log(
        `  other build - this build, Redis store: ${otherExtra.median} µs gateway CPU per request (${otherExtra.min} to ${otherExtra.max})`,
      );
      rows.push(
        ...pairRows({
          id: "wake-redis.other-build",
          title: `/wake, Redis store, ${otherBin} vs this build (diagnostic)`,
          pairs: pairsOf(rounds, "redis-other", "redis"),
          p99Target: null,
          baselineName: "Redis store, this build",
          extra: { otherBin, otherExtraUsPerRequest: otherExtra },
        }).filter((row) => !row.id.endsWith(".p99")),
        valueRow({
          id: "wake-redis.other-build-redis-server-cpu",
          title: "/wake, Redis store, other build: redis-server CPU per request (diagnostic)",
          value: stats(redisCpu("redis-other")).median,
          unit: "µs",
          values: redisCpu("redis-other"),
        }),
      );
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

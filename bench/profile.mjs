/**
 * @module Profiles the gateway (`node --cpu-prof bin/hooks.js serve`, pinned like the bench) under each scenario's
 * load and prints where the CPU goes, in µs per request: top self-time functions, areas, and inclusive time of the
 * intake's own functions, beside the server's /proc CPU per request over the same run.
 *
 *   npm run build && node bench/profile.mjs [wake agent mapped-template mapped-transform startup]
 *
 * Also the other cases of bench/lib/configs.mjs (wake-push-sized, mapped-template-small, signed-github,
 * wake-idempotency, wake-idempotency-full: the last one sends the store's 100,000 ids before its warm-up;
 * mapped-transform-worker, mapped-transform-inline, wake-metrics-on, wake-metrics-off; wake-redis,
 * wake-redis-idempotency, wake-memory-store: the Redis store on a redis-server of the bench's own, pinned to the
 * load generator's core, and the memory store in the same config). Worker threads (the
 * transform pool) write profiles of their own: they are ranked apart, over the main thread's window.
 *
 * BENCH_PROFILE_SECONDS (default 6) sets the measured load per scenario, after BENCH_WARMUP_SECONDS (1.5) of
 * warm-up; BENCH_PROFILE_INTERVAL_US (node's default, 1000) the sampling interval; BENCH_PROFILE_KEEP=<dir> keeps
 * the .cpuprofile files; BENCH_PROFILE_JSON=<file> writes the full rankings as JSON (bench/profile-diff.mjs
 * compares two of them); BENCH_HOOKS_BIN profiles another build.
 */
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CASES, caseConfig, caseRequest, scrapeMetrics } from "./lib/configs.mjs";
import { createContext } from "./lib/context.mjs";
import { analyseProfile } from "./lib/cpuprofile.mjs";
import { measure } from "./lib/load.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { HOOKS_BIN, makeTempDir, sleep } from "./lib/processes.mjs";
import { startRedisServer } from "./lib/redis-server.mjs";

// The cases of compare.mjs, and start-up (spawn to ready, no load).
const SCENARIOS = { ...CASES, startup: undefined };
const DEFAULT_SCENARIOS = ["wake", "agent", "mapped-template", "mapped-transform", "startup"];
const TOP = 20;
const WARMUP_GAP_MS = 300;
const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 6);
const intervalUs = process.env.BENCH_PROFILE_INTERVAL_US;
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : DEFAULT_SCENARIOS;

/** One ranking as a table; with `requests`, a µs-per-request column (time in the window / requests answered). */
function table(heading, rows, requests, limit = TOP) {
  const perRequest = requests ? " | µs/req" : "";
  const lines = [`| ${heading} | ms | % of busy${perRequest} |`, `|---|---|---${requests ? "|---" : ""}|`];
  for (const row of rows.slice(0, limit)) {
    const us = requests ? ` | ${((row.ms * 1000) / requests).toFixed(2)}` : "";
    lines.push(`| \`${row.name.replaceAll("|", "\\|")}\` | ${row.ms} | ${row.percent}%${us} |`);
  }
  return lines.join("\n");
}

/** The intake's and the gateway's own functions (dist/), the place to look for a fix. */
const own = (rows) => rows.filter((row) => / dist\//.test(row.name));

const context = await createContext({ log: (line) => process.stderr.write(`${line}\n`) });
const summary = { hooksBin: HOOKS_BIN, mode: describePinning(), seconds, intervalUs, scenarios: {} };
let redis;
try {
  context.log(`${describePinning()}; gateway ${HOOKS_BIN}`);
  for (const name of chosen) {
    if (!(name in SCENARIOS))
      throw new Error(`unknown scenario "${name}"; one of ${Object.keys(SCENARIOS).join(", ")}`);
    const spec = SCENARIOS[name];
    const dir = makeTempDir(`prof-${name}`);
    context.log(`profiling ${name}`);
    if (spec?.redis) redis ??= await startRedisServer();
    const gateway = await context.startGateway({
      label: `gateway (profile ${name})`,
      configFile: spec
        ? caseConfig(spec, context.dir, context.token, context.configFile, { redisUrl: redis?.url })
        : undefined,
      nodeArgs: [
        "--cpu-prof",
        "--cpu-prof-dir",
        dir,
        ...(intervalUs ? ["--cpu-prof-interval", String(intervalUs)] : []),
      ],
    });
    let run;
    try {
      if (spec) {
        const request = caseRequest(spec, context.token);
        if (spec.scrape) await scrapeMetrics(gateway);
        // Requests a case needs sent first (a full store), then warm-up (JIT, lazy imports, caches), then the
        // measured run the window is cropped to.
        for (let sent = 0; sent < (spec.leadRequests ?? 0); )
          sent += (await measure(gateway, request, 2)).requests;
        await measure(gateway, request, context.settings.warmupSeconds);
        await sleep(WARMUP_GAP_MS);
        run = await measure(gateway, request, seconds);
        context.log(
          `  ${Math.round(run.rps)} req/s, ${run.serverCpuUsPerRequest.toFixed(1)} µs server CPU/req, statuses ${JSON.stringify(run.statuses)}`,
        );
      }
    } finally {
      // A graceful stop: the profile is written when the process exits.
      await gateway.stop("SIGTERM");
    }
    // One file per thread, CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread,
    // the others are worker threads (the transform pool), written as each worker exits.
    const files = readdirSync(dir).filter((entry) => entry.endsWith(".cpuprofile"));
    const threadOf = (entry) => Number(entry.split(".").at(-3));
    const file = files.find((entry) => threadOf(entry) === 0);
    if (!file) throw new Error(`no .cpuprofile of the main thread written in ${dir}`);
    const workerFiles = files.filter((entry) => threadOf(entry) !== 0);
    if (process.env.BENCH_PROFILE_KEEP) {
      cpSync(path.join(dir, file), path.join(process.env.BENCH_PROFILE_KEEP, `${name}.cpuprofile`));
      for (const entry of workerFiles) {
        cpSync(
          path.join(dir, entry),
          path.join(process.env.BENCH_PROFILE_KEEP, `${name}.worker-${threadOf(entry)}.cpuprofile`),
        );
      }
    }
    // Under load, the window is the measured run: the last `seconds` of samples inside node's HTTP server.
    const window = spec ? { windowFrom: / node:_http_server:/, lastMs: run.elapsedSeconds * 1000 } : {};
    const result = analyseProfile(path.join(dir, file), window);
    const requests = run?.requests;
    // Worker threads over the main thread's window, their rankings merged (what the pool's threads did in all).
    const workers = spec
      ? workerFiles.map((entry) =>
          analyseProfile(path.join(dir, entry), { between: { fromUs: result.fromUs, toUs: result.toUs } }),
        )
      : [];
    const workerBusyMs = workers.reduce((sum, worker) => sum + worker.busyMs, 0);
    const merged = (key) => {
      const totals = new Map();
      for (const worker of workers)
        for (const row of worker[key]) totals.set(row.name, (totals.get(row.name) ?? 0) + row.ms);
      return [...totals.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([rowName, ms]) => ({
          name: rowName,
          ms: Math.round(ms * 10) / 10,
          percent: Math.round((ms / workerBusyMs) * 1000) / 10,
        }));
    };
    summary.scenarios[name] = {
      rps: run ? Math.round(run.rps) : undefined,
      requests,
      procCpuUsPerRequest: run ? Math.round(run.serverCpuUsPerRequest * 10) / 10 : undefined,
      ...result,
      ...(workers.length > 0
        ? {
            workers: {
              threads: workers.length,
              busyMs: workerBusyMs,
              self: merged("self"),
              inclusive: merged("inclusive"),
              areas: merged("areas"),
            },
          }
        : {}),
    };
    const busyUs = requests ? `, ${((result.busyMs * 1000) / requests).toFixed(1)} µs busy per request` : "";
    const proc = run
      ? ` (/proc: ${run.serverCpuUsPerRequest.toFixed(1)} µs CPU per request, all threads)`
      : "";
    process.stdout.write(
      `\n## ${name}${run ? ` (${Math.round(run.rps)} req/s for ${seconds} s)` : " (spawn to ready)"}\n\n` +
        `window ${result.windowMs} ms, busy ${result.busyMs} ms${busyUs}${proc}, idle ${result.idleMs} ms\n\n` +
        `${table("function (self time)", result.self, requests)}\n\n` +
        `${table("area (self time)", result.areas, requests, 12)}\n\n` +
        `${table("function in dist/ (inclusive)", own(result.inclusive), requests, 25)}\n`,
    );
    const pool = summary.scenarios[name].workers;
    if (pool && requests) {
      process.stdout.write(
        `\n### ${name}: ${pool.threads} worker thread(s) over the same window\n\n` +
          `busy ${pool.busyMs} ms, ${((pool.busyMs * 1000) / requests).toFixed(1)} µs per request\n\n` +
          `${table("worker function (self time)", pool.self, requests)}\n\n` +
          `${table("worker area (self time)", pool.areas, requests, 12)}\n`,
      );
    }
  }
  if (process.env.BENCH_PROFILE_JSON) {
    writeFileSync(path.resolve(process.env.BENCH_PROFILE_JSON), `${JSON.stringify(summary, null, 1)}\n`);
  }
} finally {
  await context.close();
  await redis?.stop();
}

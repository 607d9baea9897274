/**
 * @module Profiles one OpenClaw gateway (with this plugin and the floor plugin) under load on each endpoint in turn and
 * prints where the CPU goes per request on each, and the differences: every process of the gateway's tree profiled.
 *
 *   npx tsc -p tsconfig.build.json && node bench/openclaw-profile.mjs [plugin floor own]
 *
 * The gateway runs with NODE_OPTIONS="--cpu-prof --cpu-prof-dir=<dir>", which the processes it forks inherit (one
 * .cpuprofile per process and thread, written as each exits). The sides are loaded in rotating windows
 * (BENCH_PAIRS rounds of BENCH_PROFILE_SECONDS each, 6 by default, after a warm-up of each); each window's samples
 * are taken from every profile by time (V8's profile clock and this process's hrtime are both CLOCK_MONOTONIC), and
 * the windows of one side added up. BENCH_PROFILE_JSON=<file> writes the rankings in bench/profile.mjs's format, so
 * `node bench/profile-diff.mjs <file>#floor <file>#plugin` lists where the plugin's route costs more than the floor's.
 * BENCH_PROFILE_KEEP=<dir> keeps the .cpuprofile files.
 */
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createContext } from "./lib/context.mjs";
import { analyseProfile } from "./lib/cpuprofile.mjs";
import { measure } from "./lib/load.mjs";
import { OPENCLAW_VERSION, startOpenClaw } from "./lib/openclaw.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { makeTempDir, removeTempDir, sleep } from "./lib/processes.mjs";
import { openclawSides, waitForRoute } from "./scenarios/openclaw.mjs";

const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 6);
const TOP = 25;
/** Between windows: the last answers and their after-work settle before the next side starts. */
const GAP_MS = 500;
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["plugin", "floor", "own"];
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function table(heading, rows, requests, limit = TOP) {
  const lines = [`| ${heading} | µs/req |`, "|---|---:|"];
  for (const row of rows.slice(0, limit))
    lines.push(`| \`${row.name.replaceAll("|", "\\|")}\` | ${((row.ms * 1000) / requests).toFixed(2)} |`);
  return lines.join("\n");
}

/** Adds rankings (name → ms) over windows and processes; percent is of the added busy time. */
function addUp(results, key, busyMs) {
  const totals = new Map();
  for (const result of results)
    for (const row of result[key]) totals.set(row.name, (totals.get(row.name) ?? 0) + row.ms);
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => ({
      name,
      ms: Math.round(ms * 10) / 10,
      percent: Math.round((ms / busyMs) * 1000) / 10,
    }));
}

const context = await createContext({ log: (line) => process.stderr.write(`${line}\n`) });
const profileDir = makeTempDir("openclaw-prof");
const sides = openclawSides(context.token);
const windows = [];
let gatewayPid;
let gatewayOutput = "";
try {
  context.log(`${describePinning()}; OpenClaw ${OPENCLAW_VERSION}, profiles in ${profileDir}`);
  const gateway = await startOpenClaw({
    config: sides.config,
    floor: sides.floorConfig,
    env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` },
    // Profiling every process slows its start (it took over 120 s on a busy 2-core machine).
    readyTimeoutMs: 300_000,
    // A process killed does not write its profile: the graceful stop gets longer too.
    stopTimeoutMs: 120_000,
    log: (line) => context.log(`  ${line}`),
  });
  try {
    gatewayPid = gateway.pid;
    context.log(`  ready in ${(gateway.readyMs / 1000).toFixed(1)} s, pid ${gateway.pid}`);
    // Plugins register after /readyz on a busy machine: up to minutes when every process is profiled.
    await waitForRoute(gateway, sides.plugin, 180_000);
    await waitForRoute(gateway, sides.floor, 180_000);
    const helpers = gateway.children();
    const options = helpers.length > 0 ? { alsoPids: helpers } : {};
    for (const name of chosen) await measure(gateway, sides[name], context.settings.warmupSeconds);
    for (let round = 0; round < context.settings.pairs; round++) {
      // Each round starts one side further along, as the bench's rounds do.
      for (let i = 0; i < chosen.length; i++) {
        const name = chosen[(i + round) % chosen.length];
        await sleep(GAP_MS);
        const fromUs = nowUs();
        const run = await measure(gateway, sides[name], seconds, undefined, options);
        const toUs = nowUs();
        const helperUs = (run.alsoCpuUsPerRequest ?? []).reduce((sum, us) => sum + (us || 0), 0);
        windows.push({ name, fromUs, toUs, run, procUs: run.serverCpuUsPerRequest + helperUs });
        context.log(
          `  ${name}: ${Math.round(run.rps)} req/s, ${(run.serverCpuUsPerRequest + helperUs).toFixed(1)} µs CPU/req ` +
            `(helpers ${helperUs.toFixed(1)}), statuses ${JSON.stringify(run.statuses)}`,
        );
      }
    }
  } finally {
    // A graceful stop: every process writes its profile as it exits.
    const stopping = performance.now();
    await gateway.stop();
    context.log(`  stopped in ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
    gatewayOutput = gateway.output().slice(-2000);
  }
  const files = readdirSync(profileDir).filter((entry) => entry.endsWith(".cpuprofile"));
  if (!files.some((file) => file.split(".").at(-3) === "0" && file.includes(`.${gatewayPid}.`)))
    throw new Error(
      `the gateway's main thread wrote no .cpuprofile in ${profileDir}: ${files.join(", ")}\n${gatewayOutput}`,
    );
  if (process.env.BENCH_PROFILE_KEEP)
    for (const file of files)
      cpSync(path.join(profileDir, file), path.join(process.env.BENCH_PROFILE_KEEP, file));
  const summary = { mode: describePinning(), openclaw: OPENCLAW_VERSION, seconds, files, scenarios: {} };
  for (const name of chosen) {
    const mine = windows.filter((window) => window.name === name);
    const requests = mine.reduce((sum, window) => sum + window.run.requests, 0);
    const perFile = files.map((file) => ({
      file,
      results: mine.map((window) =>
        analyseProfile(path.join(profileDir, file), {
          between: { fromUs: window.fromUs, toUs: window.toUs },
        }),
      ),
    }));
    const results = perFile.flatMap((each) => each.results);
    const busyMs = results.reduce((sum, result) => sum + result.busyMs, 0);
    const byProcess = perFile.map(({ file, results: fileResults }) => ({
      file,
      busyUsPerRequest:
        Math.round((fileResults.reduce((sum, result) => sum + result.busyMs, 0) * 10_000) / requests) / 10,
    }));
    const procUs = mine.reduce((sum, window) => sum + window.procUs * window.run.requests, 0) / requests;
    summary.scenarios[name] = {
      windows: mine.map(({ fromUs, toUs }) => [fromUs, toUs]),
      rps: Math.round(mine.reduce((sum, window) => sum + window.run.rps, 0) / mine.length),
      requests,
      procCpuUsPerRequest: Math.round(procUs * 10) / 10,
      busyMs,
      byProcess,
      self: addUp(results, "self", busyMs),
      inclusive: addUp(results, "inclusive", busyMs),
      areas: addUp(results, "areas", busyMs),
    };
    const side = summary.scenarios[name];
    process.stdout.write(
      `\n## ${name} (${side.rps} req/s, ${mine.length} windows of ${seconds} s, ${requests} requests)\n\n` +
        `busy ${((busyMs * 1000) / requests).toFixed(1)} µs per request in the profiles, /proc ${side.procCpuUsPerRequest} µs; ` +
        `per process: ${byProcess.map((each) => `${each.file.split(".").slice(-4, -2).join(".")} ${each.busyUsPerRequest}`).join(", ")}\n\n` +
        `${table("function (self time)", side.self, requests)}\n\n` +
        `${table("area (self time)", side.areas, requests, 15)}\n`,
    );
  }
  if (process.env.BENCH_PROFILE_JSON)
    writeFileSync(path.resolve(process.env.BENCH_PROFILE_JSON), `${JSON.stringify(summary, null, 1)}\n`);
} finally {
  removeTempDir(profileDir);
  await context.close();
}

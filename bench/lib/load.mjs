/** @module Load generation: one autocannon run in its own pinned process, and alternating target/baseline pairs with ratios. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeCommand, PIN } from "./pinning.mjs";

export const CONNECTIONS = 50;
const WORKER = fileURLToPath(new URL("./load-worker.mjs", import.meta.url));

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function stats(values) {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

function runWorker(spec) {
  const { command, args } = nodeCommand(PIN.clientCpu, [WORKER, JSON.stringify(spec)]);
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: (spec.seconds + 60) * 1000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`load worker failed: ${error.message}\n${stderr.slice(-2000)}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

/**
 * One autocannon run against `server` (a handle from processes.mjs), from the load worker on the client's core.
 * The server's CPU time comes from /proc/<pid>/stat over exactly the run, read by the worker itself.
 * `request.uniqueHeaders` (optional) names headers that get a fresh UUID on every request. `options.sequence`
 * (requests of the same shape) makes each connection send those in turn instead; `options.overallRate` caps the
 * rate over all connections (requests per second); `options.alsoPids` names other processes (a service the server
 * calls) whose CPU over the same window comes back as `alsoCpuUsPerRequest`, one per PID.
 */
export async function measure(server, request, seconds, connections = CONNECTIONS, options = {}) {
  const run = await runWorker({
    url: new URL(request.path, server.url).href,
    headers: request.headers,
    body: request.body,
    uniqueHeaders: request.uniqueHeaders,
    connections,
    seconds,
    serverPid: server.pid,
    ...(options.sequence ? { sequence: options.sequence } : {}),
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    ...(options.alsoPids ? { alsoPids: options.alsoPids } : {}),
  });
  const count = run.requests;
  const serverCpuMs = run.serverCpuMs ?? Number.NaN;
  return {
    rps: count / run.elapsedSeconds,
    requests: count,
    p50Ms: run.p50Ms ?? Number.NaN,
    p99Ms: run.p99Ms ?? Number.NaN,
    statuses: run.statuses,
    errors: run.errors,
    timeouts: run.timeouts,
    /** Server CPU per request, in microseconds: a cost figure the client's own speed does not cap. */
    serverCpuUsPerRequest: count > 0 ? (serverCpuMs * 1000) / count : Number.NaN,
    /** Share of one core; near 1 when pinned means the server, not the client, set the pace. */
    serverCpuShare: serverCpuMs / 1000 / run.elapsedSeconds,
    clientCpuShare: run.clientCpuMs / 1000 / run.elapsedSeconds,
    elapsedSeconds: run.elapsedSeconds,
    ...(run.alsoCpuMs
      ? {
          alsoCpuUsPerRequest: run.alsoCpuMs.map((ms) =>
            count > 0 && ms !== null ? (ms * 1000) / count : Number.NaN,
          ),
        }
      : {}),
  };
}

export const fmtRps = (rps) => Math.round(rps).toLocaleString("en-US");
const pct = (share) => `${Math.round(share * 100)} %`;
const SATURATED = 0.9;

function unexpected(run, expectedStatus) {
  const others = Object.entries(run.statuses).filter(([status]) => Number(status) !== expectedStatus);
  if (others.length === 0 && run.errors === 0 && run.timeouts === 0) return undefined;
  return `expected only ${expectedStatus}, got statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}, timeouts ${run.timeouts}`;
}

/**
 * A B A B ...: `pairs` alternating runs of the target and its baseline after a short warm-up of each, and
 * the per-pair ratios, target/baseline: throughput, server CPU per request, p99. `onRun(side, run)`, if given,
 * sees every run, warm-ups included (side "target" or "baseline"): what a server was sent in all.
 */
export async function runPairs({ target, baseline, settings, log, onRun }) {
  const check = (side, run) => {
    onRun?.(side === target ? "target" : "baseline", run);
    const problem = unexpected(run, side.expectStatus);
    if (problem) throw new Error(`${side.server.label}: ${problem}`);
  };
  if (settings.warmupSeconds > 0) {
    log(`  warm-up ${settings.warmupSeconds}s each`);
    check(target, await measure(target.server, target.request, settings.warmupSeconds));
    check(baseline, await measure(baseline.server, baseline.request, settings.warmupSeconds));
  }
  const pairs = [];
  for (let i = 0; i < settings.pairs; i++) {
    const a = await measure(target.server, target.request, settings.seconds);
    check(target, a);
    const b = await measure(baseline.server, baseline.request, settings.seconds);
    check(baseline, b);
    const pair = {
      target: a,
      baseline: b,
      rpsRatio: a.rps / b.rps,
      cpuRatio: a.serverCpuUsPerRequest / b.serverCpuUsPerRequest,
      p99Ratio: a.p99Ms / b.p99Ms,
    };
    log(
      `  pair ${i + 1}: ${fmtRps(a.rps)} vs ${fmtRps(b.rps)} req/s (x${pair.rpsRatio.toFixed(2)}), ` +
        `server CPU/req ${a.serverCpuUsPerRequest.toFixed(1)} vs ${b.serverCpuUsPerRequest.toFixed(1)} µs (x${pair.cpuRatio.toFixed(2)}), ` +
        `p99 ${a.p99Ms.toFixed(2)} vs ${b.p99Ms.toFixed(2)} ms, ` +
        `busy: server ${pct(a.serverCpuShare)} vs ${pct(b.serverCpuShare)}, client ${pct(a.clientCpuShare)} vs ${pct(b.clientCpuShare)}`,
    );
    // Pinned, a server short of a busy core did not set the pace: its req/s says little, its CPU/req holds.
    if (PIN.enabled && Math.min(a.serverCpuShare, b.serverCpuShare) < SATURATED) {
      log(`    note: a server under ${pct(SATURATED)} busy; trust the CPU/req ratio over req/s`);
    }
    pairs.push(pair);
  }
  return pairs;
}

/** Median figures of one side across pairs, for the table and results.json. */
export function sideSummary(runs) {
  return {
    rps: median(runs.map((run) => run.rps)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    serverCpuUsPerRequest: median(runs.map((run) => run.serverCpuUsPerRequest)),
    serverCpuShare: median(runs.map((run) => run.serverCpuShare)),
    clientCpuShare: median(runs.map((run) => run.clientCpuShare)),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
  };
}

/**
 * Rounds over several servers, for more than two sides in one run: each round measures every side once, starting
 * one side further along each round (round 1: A B C, round 2: B C A, ...), so no side always follows the same
 * neighbour (whose leftover work would land on the shared core) or always opens a round. After a warm-up of each.
 * `sides` is `[{ name, server, request, expectStatus, measureOptions? }]` (`measureOptions`: `measure`'s
 * options for that side); returns `rounds`, each `{ [name]: run }`. `onRun(side, run)`, if given, sees every run,
 * warm-ups included. `pairsOf` turns two sides' runs into the pairs `pairRows` reads: the ratios within each round.
 */
export async function runRounds({ sides, rounds, settings, log, onRun }) {
  const measureSide = (side, seconds) =>
    measure(side.server, side.request, seconds, CONNECTIONS, side.measureOptions ?? {});
  const check = (side, run) => {
    onRun?.(side, run);
    const problem = unexpected(run, side.expectStatus);
    if (problem) throw new Error(`${side.server.label}: ${problem}`);
    return run;
  };
  if (settings.warmupSeconds > 0) {
    log(`  warm-up ${settings.warmupSeconds}s each`);
    for (const side of sides) check(side, await measureSide(side, settings.warmupSeconds));
  }
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const round = {};
    const order = sides.map((_, i) => sides[(i + r) % sides.length]);
    for (const side of order) round[side.name] = check(side, await measureSide(side, settings.seconds));
    log(
      `  round ${r + 1}: ` +
        order
          .map((side) => {
            const run = round[side.name];
            return `${side.name} ${fmtRps(run.rps)} req/s ${run.serverCpuUsPerRequest.toFixed(1)} µs (${pct(run.serverCpuShare)} busy)`;
          })
          .join(", "),
    );
    results.push(round);
  }
  return results;
}

/** The pairs (target, baseline and their ratios) of two sides of `runRounds`' rounds, for `pairRows`. */
export function pairsOf(rounds, targetName, baselineName) {
  return rounds.map((round) => {
    const a = round[targetName];
    const b = round[baselineName];
    return {
      target: a,
      baseline: b,
      rpsRatio: a.rps / b.rps,
      cpuRatio: a.serverCpuUsPerRequest / b.serverCpuUsPerRequest,
      p99Ratio: a.p99Ms / b.p99Ms,
    };
  });
}

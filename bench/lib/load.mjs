/** @module Load generation with autocannon: one measured run, and alternating target/baseline pairs with ratio statistics. */
import autocannon from "autocannon";
import { readCpuMs } from "./processes.mjs";

export const CONNECTIONS = 50;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function stats(values) {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

function percentile(samples, fraction) {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

/**
 * One autocannon run against `server` (a handle from processes.mjs). Latencies are collected from every
 * response as floats (autocannon's own histogram keeps whole milliseconds, too coarse for a 1–3 ms p99).
 */
export async function measure(server, request, seconds, connections = CONNECTIONS) {
  const latencies = [];
  const statuses = {};
  const cpuBefore = readCpuMs(server.pid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const instance = autocannon({
    url: new URL(request.path, server.url).href,
    method: "POST",
    headers: request.headers,
    body: request.body,
    connections,
    duration: seconds,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    latencies.push(responseTime);
  });
  const result = await instance;
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = readCpuMs(server.pid);
  const client = process.cpuUsage(clientBefore);
  const count = latencies.length;
  const serverCpuMs = cpuAfter !== undefined && cpuBefore !== undefined ? cpuAfter - cpuBefore : Number.NaN;
  return {
    rps: count / elapsed,
    requests: count,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    /** Server CPU per request, in microseconds: a cost figure the client's own speed does not cap. */
    serverCpuUsPerRequest: count > 0 ? (serverCpuMs * 1000) / count : Number.NaN,
    serverCpuShare: serverCpuMs / 1000 / elapsed,
    clientCpuShare: (client.user + client.system) / 1e6 / elapsed,
  };
}

function unexpected(run, expectedStatus) {
  const others = Object.entries(run.statuses).filter(([status]) => Number(status) !== expectedStatus);
  if (others.length === 0 && run.errors === 0 && run.timeouts === 0) return undefined;
  return `expected only ${expectedStatus}, got statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}, timeouts ${run.timeouts}`;
}

/**
 * A B A B ...: `pairs` alternating runs of the target and its baseline after a short warm-up of each, and
 * the per-pair ratios (target/baseline for throughput, target/baseline for p99).
 */
export async function runPairs({ target, baseline, settings, log }) {
  const check = (side, run) => {
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
    const pair = { target: a, baseline: b, rpsRatio: a.rps / b.rps, p99Ratio: a.p99Ms / b.p99Ms };
    log(
      `  pair ${i + 1}: ${fmtRps(a.rps)} vs ${fmtRps(b.rps)} req/s (x${pair.rpsRatio.toFixed(2)}), ` +
        `p99 ${a.p99Ms.toFixed(2)} vs ${b.p99Ms.toFixed(2)} ms, server CPU/req ${a.serverCpuUsPerRequest.toFixed(0)} vs ${b.serverCpuUsPerRequest.toFixed(0)} µs`,
    );
    pairs.push(pair);
  }
  return pairs;
}

export const fmtRps = (rps) => Math.round(rps).toLocaleString("en-US");

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

/**
 * @module Scenario (opt-in, minutes long): one gateway under a steady mixed load for BENCH_LONG_RUN_SECONDS
 * (default 240) with retention short enough to act several times within the run, sampling every 10 s the bytes its
 * state takes on disk and its resident memory. Flat after the first retention period, or growing with uptime?
 *
 * The gateway: `hooks.journal.retainHours: 0.02` (72 s; segments of 18 s, removed every 18 s),
 * `state.retainDays: 0.001` (86 s; purged every 21.6 s), `log: { file, maxSizeMb: 1, keep: 2 }`, a heartbeat every
 * 5 s, the echo runner. The load: `/wake` and `/agent` in turn on each of 10 connections, BENCH_LONG_RUN_RATE
 * (default 500) requests per second in all (autocannon's `overallRate`, in the pinned load worker).
 *
 * Flat means: the largest sample of the last half at most SIZE_TOLERANCE (state bytes) or RSS_TOLERANCE (VmRSS)
 * times the largest sample of the second quarter. The tolerances are what retention by whole pieces leaves as a saw
 * tooth, not noise allowances: the journal drops an 18 s segment at a time from about 90-126 s held, the database
 * a 21.6 s slice of 86 s, the log a whole 1 MiB file of at most 3.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { AGENT_BODY, jsonRequest, WAKE_BODY, writeLongRunConfig } from "../lib/configs.mjs";
import { isMain, numberFromEnv, runStandalone } from "../lib/context.mjs";
import { measure } from "../lib/load.mjs";
import { logLines, readCpuMs, readRss } from "../lib/processes.mjs";
import { valueRow } from "../lib/report.mjs";
import { filesBytes, JOURNAL_DIR, stateSizes } from "../lib/state.mjs";

const RETAIN_HOURS = 0.02;
const RETAIN_DAYS = 0.001;
const HEARTBEAT_SECONDS = 5;
const SAMPLE_SECONDS = 10;
const CONNECTIONS = 10;
const LOG_NAME = "gateway.log";
/** Largest state size of the last half against that of the second quarter, at most. */
const SIZE_TOLERANCE = 1.3;
/** The same for resident memory: heap sizing moves it by a few MB either way. */
const RSS_TOLERANCE = 1.15;
const MB = 1e6;

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function sampleOf(gateway, logDir, startedAt) {
  const { journalBytes, databaseBytes } = stateSizes(gateway.stateDir);
  const logBytes = filesBytes(logDir, LOG_NAME);
  return {
    t: round((performance.now() - startedAt) / 1000, 1),
    journalMB: round(journalBytes / MB, 2),
    databaseMB: round(databaseBytes / MB, 2),
    logMB: round(logBytes / MB, 2),
    totalMB: round((journalBytes + databaseBytes + logBytes) / MB, 2),
    rssMB: round((readRss(gateway.pid) ?? Number.NaN) / MB, 1),
    cpuSeconds: round((readCpuMs(gateway.pid) ?? Number.NaN) / 1000, 2),
  };
}

const maxOf = (samples, key) => Math.max(...samples.map((sample) => sample[key]));

/** Least-squares slope of `key` over the samples, per minute. */
function slopePerMinute(samples, key) {
  const n = samples.length;
  if (n < 2) return Number.NaN;
  const mt = samples.reduce((sum, s) => sum + s.t, 0) / n;
  const mv = samples.reduce((sum, s) => sum + s[key], 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s[key] - mv);
    den += (s.t - mt) ** 2;
  }
  return (num / den) * 60;
}

/** The second quarter and the last half of the run, by sample time; the ratio of their largest values. */
function flatness(samples, seconds, key) {
  const quarter = samples.filter((s) => s.t > seconds / 4 && s.t <= seconds / 2);
  const lastHalf = samples.filter((s) => s.t > seconds / 2);
  if (quarter.length === 0 || lastHalf.length === 0) return undefined;
  return {
    secondQuarterMax: maxOf(quarter, key),
    lastHalfMax: maxOf(lastHalf, key),
    lastHalfMin: Math.min(...lastHalf.map((s) => s[key])),
    ratio: maxOf(lastHalf, key) / maxOf(quarter, key),
    lastHalfSlopePerMinute: round(slopePerMinute(lastHalf, key), 2),
  };
}

function formatSample(s) {
  return (
    `t ${String(Math.round(s.t)).padStart(4)} s: state ${s.totalMB.toFixed(1).padStart(6)} MB ` +
    `(journal ${s.journalMB.toFixed(1)}, db ${s.databaseMB.toFixed(1)}, log ${s.logMB.toFixed(1)}), ` +
    `RSS ${s.rssMB.toFixed(1)} MB, CPU ${s.cpuSeconds.toFixed(1)} s`
  );
}

export const scenario = {
  id: "long-run",
  title: "long run: state size and RSS under steady mixed load with short retention",
  async run(context) {
    const seconds = numberFromEnv("BENCH_LONG_RUN_SECONDS", 240);
    const rate = numberFromEnv("BENCH_LONG_RUN_RATE", 500);
    const logDir = path.join(context.dir, "long-run-log");
    mkdirSync(logDir, { recursive: true });
    const configFile = writeLongRunConfig(context.dir, context.token, {
      retainHours: RETAIN_HOURS,
      retainDays: RETAIN_DAYS,
      logFile: path.join(logDir, LOG_NAME),
      heartbeatSeconds: HEARTBEAT_SECONDS,
    });
    context.log(
      `  ${seconds} s at ${rate} req/s (/wake and /agent in turn, ${CONNECTIONS} connections); journal retainHours ` +
        `${RETAIN_HOURS} (${RETAIN_HOURS * 3600} s), state retainDays ${RETAIN_DAYS} (${round(RETAIN_DAYS * 86400, 0)} s), ` +
        `log 1 MiB x (1 + 2 kept), heartbeat every ${HEARTBEAT_SECONDS} s; a sample every ${SAMPLE_SECONDS} s`,
    );
    const gateway = await context.startGateway({ label: "gateway (long run)", configFile });
    const wake = jsonRequest(context.token, "wake", WAKE_BODY);
    const agent = jsonRequest(context.token, "agent", AGENT_BODY);
    const samples = [];
    let run;
    try {
      const startedAt = performance.now();
      const take = () => {
        const sample = sampleOf(gateway, logDir, startedAt);
        samples.push(sample);
        context.log(`  ${formatSample(sample)}`);
      };
      take();
      const timer = setInterval(take, SAMPLE_SECONDS * 1000);
      try {
        run = await measure(gateway, wake, seconds, CONNECTIONS, {
          sequence: [wake, agent],
          overallRate: rate,
        });
      } finally {
        clearInterval(timer);
      }
      // The state as the load ended, unless the last sample was just taken.
      if ((performance.now() - startedAt) / 1000 - samples.at(-1).t > 2) take();
    } finally {
      await gateway.stop("SIGTERM");
    }
    const closed = logLines(gateway.stopOutput, "journal closed").at(-1);
    const unexpected = Object.keys(run.statuses).filter((status) => status !== "200" && status !== "202");
    if (unexpected.length > 0 || run.errors > 0 || run.timeouts > 0) {
      throw new Error(
        `${gateway.label}: expected only 200 and 202, got statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}, timeouts ${run.timeouts}`,
      );
    }
    const size = flatness(samples, seconds, "totalMB");
    const rss = flatness(samples, seconds, "rssMB");
    if (!size || !rss) throw new Error(`too few samples (${samples.length}) to judge: run longer`);
    const parts = Object.fromEntries(
      ["journalMB", "databaseMB", "logMB"].map((key) => [key, flatness(samples, seconds, key)]),
    );
    const load = {
      seconds,
      targetRate: rate,
      rps: round(run.rps, 0),
      requests: run.requests,
      statuses: run.statuses,
      p50Ms: round(run.p50Ms, 2),
      p99Ms: round(run.p99Ms, 2),
      serverCpuUsPerRequest: round(run.serverCpuUsPerRequest, 1),
      serverCpuShare: round(run.serverCpuShare, 3),
      journalClosed: closed ? { fsyncs: closed.fsyncs, durableLines: closed.durableLines } : undefined,
      fsyncsPerSecond: closed ? round(closed.fsyncs / run.elapsedSeconds, 0) : undefined,
      recordsPerFsync: closed?.fsyncs ? round(closed.durableLines / closed.fsyncs, 2) : undefined,
    };
    context.log(
      `  load: ${load.rps} req/s (${run.requests} requests, ${JSON.stringify(run.statuses)}), p99 ${load.p99Ms} ms, ` +
        `${load.serverCpuUsPerRequest} µs server CPU/req (${Math.round(load.serverCpuShare * 100)} % of a core)` +
        (closed
          ? `; journal: ${closed.fsyncs} fsyncs (${load.fsyncsPerSecond}/s), ${load.recordsPerFsync} records per fsync`
          : ""),
    );
    const window = `second quarter (${seconds / 4}-${seconds / 2} s) vs last half (${seconds / 2}-${seconds} s)`;
    const common = {
      samples,
      load,
      settings: {
        retainHours: RETAIN_HOURS,
        retainDays: RETAIN_DAYS,
        heartbeatSeconds: HEARTBEAT_SECONDS,
        logMaxSizeMb: 1,
        logKeep: 2,
        connections: CONNECTIONS,
        journalDir: JOURNAL_DIR,
      },
    };
    return [
      valueRow({
        id: "long-run.size",
        title: `long run (${seconds} s, ${rate} req/s mixed): state on disk, max of last half / max of second quarter`,
        value: size.ratio,
        unit: "x",
        digits: 3,
        target: { op: "<=", value: SIZE_TOLERANCE },
        detail:
          `${window}: ${size.secondQuarterMax.toFixed(1)} → ${size.lastHalfMax.toFixed(1)} MB ` +
          `(last half ${size.lastHalfMin.toFixed(1)}-${size.lastHalfMax.toFixed(1)} MB, slope ${size.lastHalfSlopePerMinute} MB/min); ` +
          `journal + state.sqlite (-wal, -shm) + log files`,
        flatness: { total: size, ...parts },
        ...common,
      }),
      valueRow({
        id: "long-run.rss",
        title: `long run (${seconds} s, ${rate} req/s mixed): RSS, max of last half / max of second quarter`,
        value: rss.ratio,
        unit: "x",
        digits: 3,
        target: { op: "<=", value: RSS_TOLERANCE },
        detail:
          `${window}: ${rss.secondQuarterMax.toFixed(1)} → ${rss.lastHalfMax.toFixed(1)} MB ` +
          `(last half ${rss.lastHalfMin.toFixed(1)}-${rss.lastHalfMax.toFixed(1)} MB, slope ${rss.lastHalfSlopePerMinute} MB/min); VmRSS`,
        flatness: { rss },
        load,
      }),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

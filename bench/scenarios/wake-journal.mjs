/**
 * @module Scenario: /wake with the request journal's settings, each gateway against the bare and the durable
 * baseline in rotating rounds of the three: `fsync: "batch"` (the default: one fdatasync per group of requests;
 * the `hooks serve` /wake target, at least 0.60x the durable baseline), `"always"` (one per request;
 * diagnostic), `"off"` (written, never synced) and `enabled: false`; then `off` against `enabled: false` directly,
 * A B A B, and (diagnostic) `batch` against `off`, what the fdatasync itself adds.
 *
 * The journal's counters are read from the `journal closed` line a gateway logs when it stops (SIGTERM):
 * `fsyncs` and `durableLines` since its start. They cover the warm-up run too (the same load as the measured
 * runs), so the rate is divided by the seconds the gateway was under load, warm-up included; while the baselines
 * run the gateway is idle, and an idle journal syncs nothing (only `done` lines are written then, no one waits
 * on them). Records per fsync is the ratio of the two counters.
 */
import { baselineRows, baselineSides, logBaselineRatios, TARGETS } from "../lib/baselines.mjs";
import { journalVariantName, jsonRequest, WAKE_BODY, writeJournalConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { runPairs, runRounds } from "../lib/load.mjs";
import { logLines } from "../lib/processes.mjs";
import { pairRows, valueRow } from "../lib/report.mjs";
import { countWakes, JOURNAL_DIR, treeBytes } from "../lib/state.mjs";

const VARIANTS = [
  // The default of `hooks serve`; what `npm run bench`'s other gateways run too.
  { journal: { fsync: "batch" }, durableTarget: TARGETS.wake },
  // One fdatasync per request: what a group commit saves. No target.
  { journal: { fsync: "always" }, diagnostic: true },
  { journal: { fsync: "off" } },
  { journal: { enabled: false } },
];

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Counts what a gateway was sent (warm-up included): requests answered, seconds under load, runs. */
function loadCounter() {
  const counted = { requests: 0, seconds: 0, runs: 0 };
  return {
    counted,
    onRun(side, run) {
      if (side !== "target") return;
      counted.requests += run.requests;
      counted.seconds += run.elapsedSeconds;
      counted.runs++;
    },
  };
}

/**
 * After the stop: the journal's counters from its `journal closed` line, the journal's bytes on disk, and the
 * check that every answered request was one wake (none lost by the journal's setting). Up to `connections`
 * more per run: requests in flight when a run ended, served after it.
 */
function afterStop(context, gateway, name, counted) {
  const closed = logLines(gateway.stopOutput, "journal closed").at(-1);
  const wakes = countWakes(gateway.stateDir);
  const most = counted.requests + counted.runs * context.settings.connections;
  if (wakes < counted.requests || wakes > most) {
    throw new Error(
      `${gateway.label}: ${wakes} wakes recorded for ${counted.requests} answered requests (expected ${counted.requests} to ${most})`,
    );
  }
  const journalBytes = treeBytes(`${gateway.stateDir}/${JOURNAL_DIR}`);
  if (name === "disabled") {
    if (closed || journalBytes > 0)
      throw new Error(`${gateway.label}: a journal was written with enabled: false`);
    return { wakes };
  }
  if (!closed) {
    throw new Error(
      `${gateway.label}: no "journal closed" line after SIGTERM; last output:\n${gateway.stopOutput.slice(-1500)}`,
    );
  }
  const stats = {
    wakes,
    fsyncs: closed.fsyncs,
    durableLines: closed.durableLines,
    loadSeconds: round(counted.seconds, 1),
    answered: counted.requests,
    journalBytes,
    journalBytesPerRequest: Math.round(journalBytes / counted.requests),
  };
  if (name === "batch" || name === "always") {
    stats.fsyncsPerSecond = closed.fsyncs / counted.seconds;
    stats.recordsPerFsync = closed.fsyncs > 0 ? closed.durableLines / closed.fsyncs : Number.NaN;
    // Every admitted record waits on a sync: the durable lines are the answered requests (and those in flight).
    if (closed.durableLines < counted.requests || closed.durableLines > most) {
      context.log(
        `  WARNING: ${closed.durableLines} durable lines for ${counted.requests} answered requests (expected up to ${most})`,
      );
    }
  }
  context.log(
    `  ${gateway.label}: journal closed: ${closed.fsyncs} fsyncs, ${closed.durableLines} durable lines; ` +
      `${counted.requests} requests answered in ${counted.seconds.toFixed(1)} s under load (warm-up included)` +
      (stats.fsyncsPerSecond !== undefined
        ? ` → ${Math.round(stats.fsyncsPerSecond)} fsyncs/s, ${stats.recordsPerFsync.toFixed(1)} records per fsync`
        : "") +
      `; journal ${(journalBytes / 1e6).toFixed(1)} MB (${stats.journalBytesPerRequest} B per request)`,
  );
  return stats;
}

function variantTitle(name) {
  return name === "disabled" ? "/wake, journal enabled: false" : `/wake, journal fsync "${name}"`;
}

async function againstBaseline(context, request, variant) {
  const name = journalVariantName(variant.journal);
  const configFile = writeJournalConfig(context.dir, context.token, variant.journal);
  const baselines = await baselineSides(context, request);
  const gateway = await context.startGateway({ label: `gateway (journal ${name})`, configFile });
  const counter = loadCounter();
  let rounds;
  try {
    rounds = await runRounds({
      sides: [{ name: "gateway", server: gateway, request, expectStatus: 200 }, ...baselines],
      rounds: context.settings.pairs,
      settings: context.settings,
      log: context.log,
      onRun: (side, run) => counter.onRun(side.name === "gateway" ? "target" : "baseline", run),
    });
  } finally {
    await gateway.stop("SIGTERM");
  }
  const journal = afterStop(context, gateway, name, counter.counted);
  const title = variantTitle(name);
  const rows = baselineRows({
    id: `wake-journal.${name}`,
    title: `${title}${variant.diagnostic ? " (diagnostic)" : ""}`,
    rounds,
    side: "gateway",
    durableTarget: variant.durableTarget,
    extra: { journalSetting: variant.journal, journal },
  });
  logBaselineRatios(context.log, title, rows);
  if (journal.fsyncsPerSecond !== undefined) {
    const detail =
      `${journal.fsyncs} fsyncs, ${journal.durableLines} durable records over ${journal.loadSeconds} s under load ` +
      `(warm-up included; "journal closed" at SIGTERM)`;
    rows.push(
      valueRow({
        id: `wake-journal.${name}.fsyncs`,
        title: `${title}: fsyncs per second under load`,
        value: journal.fsyncsPerSecond,
        unit: "fsync/s",
        digits: 0,
        detail,
        journal,
      }),
      valueRow({
        id: `wake-journal.${name}.records-per-fsync`,
        title: `${title}: records per fsync`,
        value: journal.recordsPerFsync,
        unit: "records",
        digits: 1,
        detail,
        journal,
      }),
    );
  }
  return rows;
}

/**
 * Two fresh gateways of one build, journal settings `a` and `b`, A B A B: `off` against `enabled: false` (what
 * writing the journal costs, unsynced; the 5 % target), `batch` against `off` (what the group commit's fdatasync
 * adds; diagnostic).
 */
async function settingVsSetting(context, request, { a, b, rpsTarget, cpuTarget, diagnostic }) {
  const nameA = journalVariantName(a);
  const nameB = journalVariantName(b);
  const first = await context.startGateway({
    label: `gateway (journal ${nameA}, A/B)`,
    configFile: writeJournalConfig(context.dir, context.token, a),
  });
  const counters = { target: loadCounter(), baseline: loadCounter() };
  let pairs;
  let second;
  try {
    second = await context.startGateway({
      label: `gateway (journal ${nameB}, A/B)`,
      configFile: writeJournalConfig(context.dir, context.token, b),
    });
    pairs = await runPairs({
      target: { server: first, request, expectStatus: 200 },
      baseline: { server: second, request, expectStatus: 200 },
      settings: context.settings,
      log: context.log,
      onRun: (side, run) => counters[side].onRun("target", run),
    });
  } finally {
    await Promise.all([first.stop("SIGTERM"), second?.stop("SIGTERM")]);
  }
  const journalA = afterStop(context, first, nameA, counters.target.counted);
  const journalB = afterStop(context, second, nameB, counters.baseline.counted);
  return pairRows({
    id: `wake-journal.${nameA}-vs-${nameB}`,
    title: `${variantTitle(nameA)} vs ${nameB === "disabled" ? "enabled: false" : `fsync "${nameB}"`}${diagnostic ? " (diagnostic)" : ""}`,
    pairs,
    rpsTarget,
    cpuTarget,
    p99Target: null,
    baselineName: `same build, ${nameB === "disabled" ? "hooks.journal.enabled: false" : `hooks.journal.fsync "${nameB}"`}`,
    extra: { journal: journalA, baselineJournal: journalB },
  });
}

export const scenario = {
  id: "wake-journal",
  title: "/wake with the request journal: batch, always, off, disabled",
  async run(context) {
    const request = jsonRequest(context.token, "wake", WAKE_BODY);
    const rows = [];
    for (const variant of VARIANTS) {
      if (variant.diagnostic && !context.settings.diagnostics) continue;
      context.log(`  ${variantTitle(journalVariantName(variant.journal))} vs the bare and durable baselines`);
      rows.push(...(await againstBaseline(context, request, variant)));
    }
    context.log('  fsync "off" (A) vs enabled: false (B)');
    rows.push(
      ...(await settingVsSetting(context, request, {
        a: { fsync: "off" },
        b: { enabled: false },
        rpsTarget: 0.95,
        cpuTarget: 1.05,
      })),
    );
    if (context.settings.diagnostics) {
      context.log('  fsync "batch" (A) vs fsync "off" (B), diagnostic: what the fdatasync adds');
      rows.push(
        ...(await settingVsSetting(context, request, {
          a: { fsync: "batch" },
          b: { fsync: "off" },
          diagnostic: true,
        })),
      );
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

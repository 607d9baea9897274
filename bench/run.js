/**
 * @module The bench runner (`npm run bench`): every scenario in turn, a Markdown table on stdout, bench/results.json.
 *
 * Pinned by default: each server under test (the gateway, the minimal host, OpenClaw, the baselines) runs on core 0
 * under `taskset -c 0`, the load generator (autocannon in its own process) and this runner on core 1, and a server's
 * CPU per request is read from /proc/<pid>/stat over each measured run. BENCH_PIN=0 runs unpinned; BENCH_SERVER_CPU /
 * BENCH_CLIENT_CPU pick the cores.
 *
 * Every throughput scenario measures its sides in rotating rounds beside two baselines (bench/lib/baselines.mjs):
 * the bare node:http server and the durable one (the same plus a JSON line per request and one fdatasync per
 * event-loop turn before the answers). The lean-core targets, against the durable baseline: the plugin on a minimal
 * host (`minimal-host`) at least 0.80x; `hooks serve` /wake (`wake`, and `wake-journal`'s `fsync: "batch"`) 0.60x;
 * the template mapping (`mapped-template`) 0.50x; /agent with the echo runner (`agent`) 0.40x; the TypeScript
 * transform in a worker (`mapped-transform`, `transform-worker`) 0.30x; and inside OpenClaw (`openclaw`) the
 * plugin's /wake at least 0.90x the floor plugin's /floor/wake in the same gateway. Rows the lean-core targets do not name keep
 * their older targets: the GitHub-signed mapping at least 0.70x the bare baseline; /wake with a new
 * Idempotency-Key at least 0.95x the req/s and at most 1.05x the CPU per request of /wake without one; the
 * journal's `fsync: "off"` within 5 % of `enabled: false`; metrics within 5 % of none; the Redis store at least
 * 0.45x the bare baseline; 10,000 mappings at least 0.90x one.
 *
 * BENCH_SECONDS (4) per run, BENCH_PAIRS (3) rounds per scenario, BENCH_WARMUP_SECONDS (1.5),
 * BENCH_ONLY=wake,agent to run some scenarios, BENCH_SKIP=openclaw to leave some out, BENCH_DIAGNOSTICS=0 to skip
 * the rows without a target, BENCH_HOOKS_BIN=<build>/bin/hooks.js to measure another build (its dist/ for the
 * minimal host, its checkout for OpenClaw's plugin).
 *
 * `long-run` (state size and RSS over minutes, BENCH_LONG_RUN_SECONDS, default 240; BENCH_LONG_RUN_RATE, default
 * 500 req/s) runs only when asked: BENCH_ONLY=long-run, whose rows are then merged into the last full run's
 * bench/results.json, or BENCH_LONG_RUN=1 to include it in a full run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createContext, machineInfo } from "./lib/context.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { HOOKS_BIN, ROOT } from "./lib/processes.mjs";
import { formatTable } from "./lib/report.mjs";
import { scenario as agent } from "./scenarios/agent.mjs";
import { scenario as idleRss } from "./scenarios/idle-rss.mjs";
import { scenario as largeBodies } from "./scenarios/large-bodies.mjs";
import { scenario as logCost } from "./scenarios/log-cost.mjs";
import { scenario as longRun } from "./scenarios/long-run.mjs";
import { scenario as mappedTemplate } from "./scenarios/mapped-template.mjs";
import { scenario as mappedTransform } from "./scenarios/mapped-transform.mjs";
import { scenario as mappings10k } from "./scenarios/mappings-10k.mjs";
import { scenario as minimalHost } from "./scenarios/minimal-host.mjs";
import { scenario as openclaw } from "./scenarios/openclaw.mjs";
import { scenario as signedGithub } from "./scenarios/signed-github.mjs";
import { scenario as startup } from "./scenarios/startup.mjs";
import { scenario as transformWorker } from "./scenarios/transform-worker.mjs";
import { scenario as wake } from "./scenarios/wake.mjs";
import { scenario as wakeIdempotency } from "./scenarios/wake-idempotency.mjs";
import { scenario as wakeJournal } from "./scenarios/wake-journal.mjs";
import { scenario as wakeMetrics } from "./scenarios/wake-metrics.mjs";
import { scenario as wakeRedis } from "./scenarios/wake-redis.mjs";

const SCENARIOS = [
  minimalHost,
  wake,
  agent,
  mappedTemplate,
  mappedTransform,
  transformWorker,
  openclaw,
  signedGithub,
  wakeIdempotency,
  wakeJournal,
  wakeMetrics,
  wakeRedis,
  mappings10k,
  largeBodies,
  startup,
  idleRss,
  logCost,
  longRun,
];
const DIAGNOSTIC = new Set([logCost.id]);
/** Minutes long: run only when BENCH_ONLY names them, or with BENCH_LONG_RUN=1 in a full run. */
const OPT_IN = new Set([longRun.id]);
const optedIn = process.env.BENCH_LONG_RUN === "1";

function selected() {
  const only = process.env.BENCH_ONLY?.split(",")
    .map((id) => id.trim())
    .filter(Boolean);
  const diagnostics = process.env.BENCH_DIAGNOSTICS !== "0";
  const skip = new Set(
    process.env.BENCH_SKIP?.split(",")
      .map((id) => id.trim())
      .filter(Boolean),
  );
  const unknownSkip = [...skip].filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknownSkip.length > 0) {
    throw new Error(
      `BENCH_SKIP: unknown ${unknownSkip.join(", ")}; known: ${SCENARIOS.map((s) => s.id).join(", ")}`,
    );
  }
  if (only) {
    const unknown = only.filter((id) => !SCENARIOS.some((s) => s.id === id));
    if (unknown.length > 0)
      throw new Error(
        `BENCH_ONLY: unknown ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.id).join(", ")}`,
      );
    return SCENARIOS.filter((s) => only.includes(s.id) && !skip.has(s.id));
  }
  return SCENARIOS.filter(
    (s) => (diagnostics || !DIAGNOSTIC.has(s.id)) && (optedIn || !OPT_IN.has(s.id)) && !skip.has(s.id),
  );
}

const started = Date.now();
const machine = machineInfo();
const context = await createContext();
const rows = [];
const failures = [];
try {
  context.log(
    `hooks bench: node ${process.version}, ${machine.cores} x ${machine.cpuModel}, load ${machine.loadAverageAtStart.join(" ")}; ` +
      `${context.settings.pairs} pairs x ${context.settings.seconds}s, ${context.settings.connections} connections\n` +
      `${describePinning()}; gateway ${HOOKS_BIN}`,
  );
  for (const scenario of selected()) {
    context.log(`\n${scenario.title}`);
    try {
      rows.push(...(await scenario.run(context)));
    } catch (error) {
      // One broken scenario is a failed row, not a lost run: the others still measure.
      context.log(`  ERROR: ${error.message}`);
      failures.push({ scenario: scenario.id, error: error.message });
      rows.push({
        id: scenario.id,
        title: `${scenario.title}: error`,
        kind: "error",
        value: Number.NaN,
        unit: "",
        pass: false,
        detail: error.message.split("\n")[0],
      });
    }
  }
} finally {
  await context.close();
}

const table = formatTable(rows);
const judged = rows.filter((row) => row.pass !== undefined);
const passed = judged.filter((row) => row.pass).length;
context.log(
  `\n${table}\n\n${passed} of ${judged.length} targets met; ${Math.round((Date.now() - started) / 1000)} s`,
);

const results = {
  generatedAt: new Date().toISOString(),
  command: "npm run bench",
  mode: describePinning(),
  hooksBin: HOOKS_BIN,
  durationSeconds: Math.round((Date.now() - started) / 1000),
  settings: context.settings,
  machine,
  node: process.version,
  summary: { targets: judged.length, passed, failed: judged.length - passed },
  scenarios: rows,
  errors: failures,
  table,
};
const resultsFile = path.join(ROOT, "bench", "results.json");
const onlyIds = process.env.BENCH_ONLY?.split(",")
  .map((id) => id.trim())
  .filter(Boolean);
// results.json is this checkout's full run: a partial run or another build's figures would replace it. The one
// exception is an opt-in scenario run on its own (BENCH_ONLY=long-run): a full run leaves it out, so its rows are
// merged into the last full run's file, replacing its earlier rows, each marked with when and how it was measured.
if (process.env.BENCH_HOOKS_BIN) {
  context.log("BENCH_HOOKS_BIN set: bench/results.json left as it was");
} else if (onlyIds?.every((id) => OPT_IN.has(id)) && rows.length > 0) {
  mergeIntoResults(onlyIds);
} else if (onlyIds) {
  context.log("BENCH_ONLY set: bench/results.json left as it was");
} else {
  writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  context.log("wrote bench/results.json");
}

function mergeIntoResults(ids) {
  let previous;
  try {
    previous = JSON.parse(readFileSync(resultsFile, "utf8"));
  } catch {
    context.log("no bench/results.json to merge into: run `npm run bench` first; left as it was");
    return;
  }
  const ofMerged = (row) => ids.some((id) => row.id === id || row.id.startsWith(`${id}.`));
  // npm sets npm_lifecycle_event for `npm run bench` (which builds first); `node bench/run.js` measures dist/ as it is.
  const runner = process.env.npm_lifecycle_event === "bench" ? "npm run bench" : "node bench/run.js";
  const command = `BENCH_ONLY=${ids.join(",")} ${runner}`;
  const added = rows.map((row) => ({ ...row, measuredAt: results.generatedAt, command }));
  const scenarios = [...previous.scenarios.filter((row) => !ofMerged(row)), ...added];
  const judgedAll = scenarios.filter((row) => row.pass !== undefined);
  const passedAll = judgedAll.filter((row) => row.pass).length;
  const merged = {
    ...previous,
    summary: { targets: judgedAll.length, passed: passedAll, failed: judgedAll.length - passedAll },
    scenarios,
    errors: [...(previous.errors ?? []).filter((error) => !ids.includes(error.scenario)), ...failures],
    merged: [
      ...(previous.merged ?? []).filter((entry) => !ids.includes(entry.scenario)),
      ...ids.map((id) => ({
        scenario: id,
        generatedAt: results.generatedAt,
        command,
        durationSeconds: results.durationSeconds,
        mode: results.mode,
        settings: results.settings,
        loadAverageAtStart: machine.loadAverageAtStart,
      })),
    ],
    table: formatTable(scenarios),
  };
  writeFileSync(resultsFile, `${JSON.stringify(merged, null, 2)}\n`);
  context.log(`merged the rows of ${ids.join(", ")} into bench/results.json (the rest is the last full run)`);
}
if (failures.length > 0) process.exitCode = 1;

/**
 * @module The bench runner (`npm run bench`): every scenario in turn, a Markdown table on stdout, bench/results.json.
 *
 * Pinned by default: each server under test (the gateway, the bare node:http baseline) runs on core 0 under
 * `taskset -c 0`, the load generator (autocannon in its own process) and this runner on core 1, and a server's CPU
 * per request is read from /proc/<pid>/stat over each measured run. BENCH_PIN=0 runs unpinned (the old figures'
 * setup, except that autocannon is still a process of its own); BENCH_SERVER_CPU / BENCH_CLIENT_CPU pick the cores.
 * Pinned targets: /wake at least 0.80x the baseline's req/s and at most 1.25x its CPU per request, the template
 * mapping at least 0.70x; unpinned, the older 0.75x and 0.65x throughput targets. The GitHub-signed mapping at least
 * 0.70x the baseline; /wake with a new Idempotency-Key on every request at least 0.95x the req/s and at most 1.05x
 * the CPU per request of /wake without one, below the store's bound and with the default store full.
 *
 * BENCH_SECONDS (4) per run, BENCH_PAIRS (3) A/B pairs per scenario, BENCH_WARMUP_SECONDS (1.5),
 * BENCH_ONLY=wake,agent to run some scenarios, BENCH_DIAGNOSTICS=0 to skip the rows without a target,
 * BENCH_HOOKS_BIN=<build>/bin/hooks.js to measure another build.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createContext, machineInfo } from "./lib/context.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { HOOKS_BIN, ROOT } from "./lib/processes.mjs";
import { formatTable } from "./lib/report.mjs";
import { scenario as agent } from "./scenarios/agent.mjs";
import { scenario as idleRss } from "./scenarios/idle-rss.mjs";
import { scenario as largeBodies } from "./scenarios/large-bodies.mjs";
import { scenario as logCost } from "./scenarios/log-cost.mjs";
import { scenario as mappedTemplate } from "./scenarios/mapped-template.mjs";
import { scenario as mappedTransform } from "./scenarios/mapped-transform.mjs";
import { scenario as mappings10k } from "./scenarios/mappings-10k.mjs";
import { scenario as signedGithub } from "./scenarios/signed-github.mjs";
import { scenario as startup } from "./scenarios/startup.mjs";
import { scenario as wake } from "./scenarios/wake.mjs";
import { scenario as wakeIdempotency } from "./scenarios/wake-idempotency.mjs";

const SCENARIOS = [
  wake,
  agent,
  mappedTemplate,
  mappedTransform,
  signedGithub,
  wakeIdempotency,
  mappings10k,
  largeBodies,
  startup,
  idleRss,
  logCost,
];
const DIAGNOSTIC = new Set([logCost.id]);

function selected() {
  const only = process.env.BENCH_ONLY?.split(",")
    .map((id) => id.trim())
    .filter(Boolean);
  const diagnostics = process.env.BENCH_DIAGNOSTICS !== "0";
  if (only) {
    const unknown = only.filter((id) => !SCENARIOS.some((s) => s.id === id));
    if (unknown.length > 0)
      throw new Error(
        `BENCH_ONLY: unknown ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.id).join(", ")}`,
      );
    return SCENARIOS.filter((s) => only.includes(s.id));
  }
  return SCENARIOS.filter((s) => diagnostics || !DIAGNOSTIC.has(s.id));
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
// results.json is this checkout's full run: a partial run or another build's figures would replace it.
if (process.env.BENCH_ONLY || process.env.BENCH_HOOKS_BIN) {
  context.log("BENCH_ONLY or BENCH_HOOKS_BIN set: bench/results.json left as it was");
} else {
  writeFileSync(path.join(ROOT, "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  context.log("wrote bench/results.json");
}
if (failures.length > 0) process.exitCode = 1;

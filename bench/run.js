/**
 * @module The bench runner (`npm run bench`): every scenario in turn, a Markdown table on stdout, bench/results.json.
 *
 * BENCH_SECONDS (4) per run, BENCH_PAIRS (3) A/B pairs per scenario, BENCH_WARMUP_SECONDS (1.5),
 * BENCH_ONLY=wake,agent to run some scenarios, BENCH_DIAGNOSTICS=0 to skip the rows without a target.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createContext, machineInfo } from "./lib/context.mjs";
import { ROOT } from "./lib/processes.mjs";
import { formatTable } from "./lib/report.mjs";
import { scenario as agent } from "./scenarios/agent.mjs";
import { scenario as idleRss } from "./scenarios/idle-rss.mjs";
import { scenario as largeBodies } from "./scenarios/large-bodies.mjs";
import { scenario as logCost } from "./scenarios/log-cost.mjs";
import { scenario as mappedTemplate } from "./scenarios/mapped-template.mjs";
import { scenario as mappedTransform } from "./scenarios/mapped-transform.mjs";
import { scenario as mappings10k } from "./scenarios/mappings-10k.mjs";
import { scenario as startup } from "./scenarios/startup.mjs";
import { scenario as wake } from "./scenarios/wake.mjs";

const SCENARIOS = [
  wake,
  agent,
  mappedTemplate,
  mappedTransform,
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
      `${context.settings.pairs} pairs x ${context.settings.seconds}s, ${context.settings.connections} connections`,
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
  durationSeconds: Math.round((Date.now() - started) / 1000),
  settings: context.settings,
  machine,
  node: process.version,
  summary: { targets: judged.length, passed, failed: judged.length - passed },
  scenarios: rows,
  errors: failures,
  table,
};
if (!process.env.BENCH_ONLY) {
  writeFileSync(path.join(ROOT, "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  context.log("wrote bench/results.json");
} else {
  context.log("BENCH_ONLY set: bench/results.json left as it was");
}
if (failures.length > 0) process.exitCode = 1;

/**
 * @module Profiles the gateway (`node --cpu-prof bin/hooks.js serve`) under each scenario's load and prints where the
 * CPU goes: top self-time functions, areas, and inclusive time of the intake's own functions.
 *
 *   npm run build && node bench/profile.mjs [wake agent mapped-template mapped-transform startup]
 *
 * BENCH_PROFILE_SECONDS (default 6) sets the load per scenario; BENCH_PROFILE_KEEP=<dir> keeps the .cpuprofile
 * files; BENCH_PROFILE_JSON=<file> writes the rankings as JSON; BENCH_HOOKS_BIN profiles another build.
 */
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AGENT_BODY, jsonRequest, PUSH_PAYLOAD, WAKE_BODY } from "./lib/configs.mjs";
import { createContext } from "./lib/context.mjs";
import { analyseProfile } from "./lib/cpuprofile.mjs";
import { measure } from "./lib/load.mjs";
import { makeTempDir } from "./lib/processes.mjs";

const SCENARIOS = {
  wake: { hook: "wake", body: WAKE_BODY, status: 200 },
  agent: { hook: "agent", body: AGENT_BODY, status: 202 },
  "mapped-template": { hook: "github/push", body: PUSH_PAYLOAD, status: 200 },
  "mapped-transform": { hook: "github/push-ts", body: PUSH_PAYLOAD, status: 202 },
  startup: undefined,
};
const TOP = 20;
const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 6);
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(SCENARIOS);

function table(rows, limit = TOP) {
  const lines = ["| # | function (self time) | ms | % of busy |", "|---|---|---|---|"];
  rows.slice(0, limit).forEach((row, i) => {
    lines.push(`| ${i + 1} | \`${row.name.replaceAll("|", "\\|")}\` | ${row.ms} | ${row.percent}% |`);
  });
  return lines.join("\n");
}

function areaTable(rows, limit = 12) {
  const lines = ["| area (self time) | ms | % of busy |", "|---|---|---|"];
  for (const row of rows.slice(0, limit)) lines.push(`| ${row.name} | ${row.ms} | ${row.percent}% |`);
  return lines.join("\n");
}

/** Inclusive time of the intake's and the gateway's own functions (dist/), the place to look for a fix. */
function ownInclusive(rows, limit = 25) {
  const own = rows.filter((row) => row.name.includes("/dist/") || / dist\//.test(row.name));
  const lines = ["| function in dist/ (inclusive) | ms | % of busy |", "|---|---|---|"];
  for (const row of own.slice(0, limit))
    lines.push(`| \`${row.name.replaceAll("|", "\\|")}\` | ${row.ms} | ${row.percent}% |`);
  return lines.join("\n");
}

const context = await createContext({ log: (line) => process.stderr.write(`${line}\n`) });
const summary = {};
try {
  for (const name of chosen) {
    if (!(name in SCENARIOS))
      throw new Error(`unknown scenario "${name}"; one of ${Object.keys(SCENARIOS).join(", ")}`);
    const spec = SCENARIOS[name];
    const dir = makeTempDir(`prof-${name}`);
    context.log(`profiling ${name}`);
    const gateway = await context.startGateway({
      label: `gateway (profile ${name})`,
      nodeArgs: ["--cpu-prof", "--cpu-prof-dir", dir],
    });
    let run;
    try {
      if (spec) {
        const request = jsonRequest(context.token, spec.hook, spec.body);
        run = await measure(gateway, request, seconds);
        context.log(`  ${Math.round(run.rps)} req/s, statuses ${JSON.stringify(run.statuses)}`);
      }
    } finally {
      // A graceful stop: the profile is written when the process exits.
      await gateway.stop("SIGTERM");
    }
    const file = readdirSync(dir).find((entry) => entry.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
    if (process.env.BENCH_PROFILE_KEEP) {
      cpSync(path.join(dir, file), path.join(process.env.BENCH_PROFILE_KEEP, `${name}.cpuprofile`));
    }
    // Under load, the window is the traffic: from the first to the last sample inside node's HTTP server.
    const result = analyseProfile(path.join(dir, file), spec ? { windowFrom: / node:_http_server:/ } : {});
    summary[name] = {
      rps: run ? Math.round(run.rps) : undefined,
      ...result,
      self: result.self.slice(0, 40),
      inclusive: result.inclusive.slice(0, 120),
      areas: result.areas.slice(0, 20),
    };
    process.stdout.write(
      `\n## ${name}${run ? ` (${Math.round(run.rps)} req/s for ${seconds} s)` : " (spawn to ready)"}\n\n` +
        `window ${result.windowMs} ms, busy ${result.busyMs} ms, idle ${result.idleMs} ms\n\n` +
        `${table(result.self)}\n\n${areaTable(result.areas)}\n\n${ownInclusive(result.inclusive)}\n`,
    );
  }
  if (process.env.BENCH_PROFILE_JSON) {
    writeFileSync(path.resolve(process.env.BENCH_PROFILE_JSON), `${JSON.stringify(summary, null, 2)}\n`);
  }
} finally {
  await context.close();
}

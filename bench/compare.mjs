/**
 * @module A/B of two builds of the gateway under the same load, pinned like the bench: before, after, before, after.
 *
 *   BENCH_BEFORE_BIN=/tmp/hooks-before/bin/hooks.js node bench/compare.mjs wake mapped-template mapped-transform agent
 *
 * BENCH_BEFORE_BIN and BENCH_AFTER_BIN name each build's bin/hooks.js; the one left unset is this checkout (or
 * BENCH_HOOKS_BIN). BENCH_COMPARE_BIN is the older name of BENCH_AFTER_BIN (a changed copy against this checkout).
 * Prints req/s and server CPU µs per request of both builds and the ratios after/before, medians of the pairs;
 * BENCH_SECONDS, BENCH_PAIRS, BENCH_WARMUP_SECONDS and BENCH_PIN work as in `npm run bench`. BENCH_ROTATE=1
 * turns the order each pair (after, before; then before, after; ...: `runRounds`), so that neither build is always
 * measured first: with the transform gateways, whichever build went first read about 10 % more CPU per request
 * in 8 fixed-order pairs, either way round.
 */
import path from "node:path";
import { CASES, caseConfig, caseRequest, scrapeMetrics } from "./lib/configs.mjs";
import { createContext } from "./lib/context.mjs";
import { fmtRps, pairsOf, runPairs, runRounds, sideSummary } from "./lib/load.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { HOOKS_BIN } from "./lib/processes.mjs";
import { pairRows } from "./lib/report.mjs";

const DEFAULT_CASES = ["wake", "agent", "mapped-template", "mapped-transform"];

const before = path.resolve(process.env.BENCH_BEFORE_BIN ?? HOOKS_BIN);
const after = path.resolve(process.env.BENCH_AFTER_BIN ?? process.env.BENCH_COMPARE_BIN ?? HOOKS_BIN);
if (before === after) {
  process.stderr.write("set BENCH_BEFORE_BIN (or BENCH_AFTER_BIN) to the other build's bin/hooks.js\n");
  process.exit(2);
}
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : DEFAULT_CASES;
const unknown = names.filter((name) => !(name in CASES));
if (unknown.length > 0) {
  process.stderr.write(`unknown case ${unknown.join(", ")}; one of ${Object.keys(CASES).join(", ")}\n`);
  process.exit(2);
}

const rotate = process.env.BENCH_ROTATE === "1";
const x = (ratio) => `${ratio.toFixed(2)}x`;
const us = (side) => side.serverCpuUsPerRequest.toFixed(1);

function formatComparison(results) {
  const lines = [
    "| case | req/s before | req/s after | after/before | CPU µs/req before | CPU µs/req after | after/before | p99 ms before / after | CPU after/before, each pair |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const { name, rows, pairs } of results) {
    const [throughput, cpu] = rows;
    const b = sideSummary(pairs.map((pair) => pair.baseline));
    const a = sideSummary(pairs.map((pair) => pair.target));
    lines.push(
      `| ${name} | ${fmtRps(b.rps)} | ${fmtRps(a.rps)} | ${x(throughput.value)} | ${us(b)} | ${us(a)} | ${x(cpu.value)} | ` +
        `${b.p99Ms.toFixed(2)} / ${a.p99Ms.toFixed(2)} | ${cpu.ratios.all.map(x).join(", ")} |`,
    );
  }
  return lines.join("\n");
}

const context = await createContext();
const results = [];
try {
  context.log(
    `before: ${before}\nafter:  ${after}\n${describePinning()}; ` +
      `${context.settings.pairs} pairs x ${context.settings.seconds}s, ${context.settings.connections} connections`,
  );
  for (const name of names) {
    const spec = CASES[name];
    context.log(`\n${name}: after vs before, alternated${rotate ? ", the order turned each pair" : ""}`);
    const configFile = caseConfig(spec, context.dir, context.token, context.configFile);
    const afterGateway = await context.startGateway({ label: `after (${name})`, bin: after, configFile });
    const beforeGateway = await context.startGateway({ label: `before (${name})`, bin: before, configFile });
    try {
      const request = caseRequest(spec, context.token);
      if (spec.scrape) await Promise.all([scrapeMetrics(afterGateway), scrapeMetrics(beforeGateway)]);
      const afterSide = { name: "after", server: afterGateway, request, expectStatus: spec.status };
      const beforeSide = { name: "before", server: beforeGateway, request, expectStatus: spec.status };
      const pairs = rotate
        ? pairsOf(
            await runRounds({
              sides: [afterSide, beforeSide],
              rounds: context.settings.pairs,
              settings: context.settings,
              log: context.log,
            }),
            "after",
            "before",
          )
        : await runPairs({
            target: afterSide,
            baseline: beforeSide,
            settings: context.settings,
            log: context.log,
          });
      const rows = pairRows({
        id: `compare.${name}`,
        title: name,
        pairs,
        p99Target: null,
        baselineName: "before",
      });
      results.push({ name, rows, pairs });
    } finally {
      await Promise.all([afterGateway.stop(), beforeGateway.stop()]);
    }
  }
  context.log(`\n${formatComparison(results)}`);
} finally {
  await context.close();
}

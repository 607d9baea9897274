/**
 * @module A/B two builds of the gateway under one scenario's load, to check a change before committing it:
 * copy the package, apply the change there, build it, then
 *
 *   BENCH_COMPARE_BIN=/tmp/copy/bin/hooks.js node bench/compare.mjs wake agent mapped-template mapped-transform
 *
 * A is the other build, B is this checkout (or BENCH_HOOKS_BIN); the ratio is A/B throughput, medians of pairs.
 */
import { AGENT_BODY, jsonRequest, PUSH_PAYLOAD, WAKE_BODY } from "./lib/configs.mjs";
import { createContext } from "./lib/context.mjs";
import { runPairs } from "./lib/load.mjs";
import { formatTable, pairRows } from "./lib/report.mjs";

const CASES = {
  wake: { hook: "wake", body: WAKE_BODY, status: 200 },
  agent: { hook: "agent", body: AGENT_BODY, status: 202 },
  "mapped-template": { hook: "github/push", body: PUSH_PAYLOAD, status: 200 },
  "mapped-transform": { hook: "github/push-ts", body: PUSH_PAYLOAD, status: 202 },
};

const other = process.env.BENCH_COMPARE_BIN;
if (!other) {
  process.stderr.write("set BENCH_COMPARE_BIN to the other build's bin/hooks.js\n");
  process.exit(2);
}
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(CASES);
const context = await createContext();
const rows = [];
try {
  for (const name of names) {
    const spec = CASES[name];
    if (!spec) throw new Error(`unknown case "${name}"; one of ${Object.keys(CASES).join(", ")}`);
    context.log(`${name}: ${other} (A) vs this checkout (B)`);
    const a = await context.startGateway({ label: `A (${name})`, bin: other });
    const b = await context.startGateway({ label: `B (${name})` });
    try {
      const request = jsonRequest(context.token, spec.hook, spec.body);
      const pairs = await runPairs({
        target: { server: a, request, expectStatus: spec.status },
        baseline: { server: b, request, expectStatus: spec.status },
        settings: context.settings,
        log: context.log,
      });
      rows.push(
        ...pairRows({
          id: `compare.${name}`,
          title: `${name}, A vs B`,
          pairs,
          rpsTarget: undefined,
          p99Target: null,
          baselineName: "B",
        }),
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }
  context.log(`\n${formatTable(rows)}`);
} finally {
  await context.close();
}

/**
 * @module Splits what a template mapping costs over a direct /wake, from the server's /proc CPU per request:
 * {direct /wake, template mapping} x {small body, the push payload's size}, and the bare baseline with each body.
 *
 *   BENCH_HOOKS_BIN=/tmp/hooks-before/bin/hooks.js node bench/template-cost.mjs
 *
 * Pinned like the bench; every variant once per round, BENCH_PAIRS rounds of BENCH_SECONDS, medians.
 */
import { CASES, jsonRequest, PUSH_PAYLOAD, WAKE_BODY } from "./lib/configs.mjs";
import { createContext } from "./lib/context.mjs";
import { fmtRps, measure, median } from "./lib/load.mjs";
import { describePinning } from "./lib/pinning.mjs";
import { HOOKS_BIN } from "./lib/processes.mjs";

const VARIANTS = [
  { id: "baseline, wake body", server: "baseline", body: WAKE_BODY },
  { id: "baseline, push body", server: "baseline", body: PUSH_PAYLOAD },
  { id: "/wake", server: "gateway", ...CASES.wake },
  { id: "/wake, push-sized body", server: "gateway", ...CASES["wake-push-sized"] },
  { id: "template, 4 fields", server: "gateway", ...CASES["mapped-template-small"] },
  { id: "template, push body", server: "gateway", ...CASES["mapped-template"] },
];
const SPLITS = [
  ["a larger body on the bare server (read, parse)", "baseline, push body", "baseline, wake body"],
  ["a larger body on the direct /wake path", "/wake, push-sized body", "/wake"],
  ["the mapping, small body", "template, 4 fields", "/wake"],
  ["the mapping, push body", "template, push body", "/wake, push-sized body"],
  ["template mapping over /wake, in all", "template, push body", "/wake"],
];

const context = await createContext();
const gateway = await context.startGateway({ label: "gateway (template cost)" });
const servers = { gateway, baseline: await context.baseline() };
const runs = new Map(VARIANTS.map((variant) => [variant.id, []]));
try {
  const { pairs, seconds, warmupSeconds } = context.settings;
  context.log(
    `${describePinning()}; gateway ${HOOKS_BIN}; ${pairs} rounds x ${VARIANTS.length} x ${seconds}s`,
  );
  const run = async (variant, duration) => {
    const request = jsonRequest(context.token, variant.hook ?? "wake", variant.body);
    const result = await measure(servers[variant.server], request, duration);
    const expected = variant.server === "baseline" ? 200 : variant.status;
    if (result.statuses[expected] !== result.requests) {
      throw new Error(`${variant.id}: expected only ${expected}, got ${JSON.stringify(result.statuses)}`);
    }
    return result;
  };
  for (const variant of VARIANTS) await run(variant, warmupSeconds);
  for (let round = 1; round <= pairs; round++) {
    for (const variant of VARIANTS) {
      const result = await run(variant, seconds);
      runs.get(variant.id).push(result);
      context.log(
        `  round ${round}, ${variant.id}: ${fmtRps(result.rps)} req/s, ${result.serverCpuUsPerRequest.toFixed(1)} µs CPU/req`,
      );
    }
  }
} finally {
  await context.close();
}

const cpu = (id) => median(runs.get(id).map((run) => run.serverCpuUsPerRequest));
const lines = ["| variant | req/s | server CPU µs/req (median) | all rounds |", "|---|---|---|---|"];
for (const { id } of VARIANTS) {
  const all = runs.get(id).map((run) => run.serverCpuUsPerRequest.toFixed(1));
  lines.push(
    `| ${id} | ${fmtRps(median(runs.get(id).map((run) => run.rps)))} | ${cpu(id).toFixed(1)} | ${all.join(", ")} |`,
  );
}
lines.push("", "| what it costs | µs/req | from |", "|---|---|---|");
for (const [label, minuend, subtrahend] of SPLITS) {
  lines.push(`| ${label} | ${(cpu(minuend) - cpu(subtrahend)).toFixed(1)} | ${minuend} − ${subtrahend} |`);
}
context.log(`\n${lines.join("\n")}`);

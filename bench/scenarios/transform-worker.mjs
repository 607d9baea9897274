/**
 * @module Scenario: the TypeScript transform mapping with `transform.isolate: "worker"` (the default: the pool of
 * worker threads) and with `"inline"` (the gateway's own thread), each gateway against the bare baseline (A B A B).
 *
 * Diagnostic (no targets yet): what the thread boundary costs per request, a structured clone of the context in
 * and of the result out plus a message each way. Pinned, the pool's threads run on the gateway's core too
 * (`taskset` pins the whole process), so its CPU per request counts the workers' time and nothing runs in
 * parallel; `BENCH_PIN=0` shows what a second core gives back.
 */
import { jsonRequest, PUSH_PAYLOAD, writeTransformIsolateConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

const VARIANTS = ["worker", "inline"];

export const scenario = {
  id: "transform-worker",
  title: "mapped hook, TS transform: worker pool vs inline",
  async run(context) {
    const rows = [];
    for (const isolate of VARIANTS) {
      context.log(`  isolate "${isolate}" vs bare node:http`);
      rows.push(
        ...(await gatewayVsBaseline(context, {
          id: `transform-worker.${isolate}`,
          title: `mapped hook, TS transform, isolate "${isolate}" (diagnostic)`,
          request: jsonRequest(context.token, "github/push-ts", PUSH_PAYLOAD),
          configFile: writeTransformIsolateConfig(context.dir, context.token, isolate),
          expectStatus: 202,
          p99Target: null,
        })),
      );
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

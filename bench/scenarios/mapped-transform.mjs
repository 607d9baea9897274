/**
 * @module Scenario: a mapped hook with a TypeScript transform (fixtures/transforms/github-push.ts via jiti, in the
 * default worker pool) returning an agent turn. Target: at least 0.30x the durable baseline's req/s.
 */
import { TARGETS } from "../lib/baselines.mjs";
import { jsonRequest, PUSH_PAYLOAD } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

export const scenario = {
  id: "mapped-transform",
  title: "mapped hook, TS transform",
  // The transform names one session per repository, so every turn continues `hook:github:Codertocat/Hello-World`.
  run: (context) =>
    gatewayVsBaseline(context, {
      id: "mapped-transform",
      title: "mapped hook, TS transform",
      request: jsonRequest(context.token, "github/push-ts", PUSH_PAYLOAD),
      expectStatus: 202,
      durableTarget: TARGETS.transformWorker,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

/**
 * @module Scenario: a mapped hook rendered from templates (github/push, a wake) with GitHub's push payload (the
 * baselines get the same body). Target: at least 0.50x the durable baseline's req/s.
 */
import { TARGETS } from "../lib/baselines.mjs";
import { jsonRequest, PUSH_PAYLOAD } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

export const scenario = {
  id: "mapped-template",
  title: "mapped hook, templates",
  run: (context) =>
    gatewayVsBaseline(context, {
      id: "mapped-template",
      title: "mapped hook, templates",
      request: jsonRequest(context.token, "github/push", PUSH_PAYLOAD),
      expectStatus: 200,
      durableTarget: TARGETS.template,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

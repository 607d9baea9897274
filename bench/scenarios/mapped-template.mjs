/** @module Scenario: a mapped hook rendered from templates (github/push, a wake) with GitHub's push payload. */
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
      // Pinned, the target; unpinned (BENCH_PIN=0), the old shared-core one.
      rpsTarget: context.settings.pin.enabled ? 0.7 : 0.65,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

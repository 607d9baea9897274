/** @module Scenario: POST /hooks/wake (validate, wrap, queue a system event, request a heartbeat) against the baseline. */
import { jsonRequest, WAKE_BODY } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

export const scenario = {
  id: "wake",
  title: "/wake",
  run: (context) =>
    gatewayVsBaseline(context, {
      id: "wake",
      title: "/wake",
      request: jsonRequest(context.token, "wake", WAKE_BODY),
      expectStatus: 200,
      // Pinned, the targets; unpinned (BENCH_PIN=0), the old shared-core throughput target only.
      rpsTarget: context.settings.pin.enabled ? 0.8 : 0.75,
      cpuTarget: context.settings.pin.enabled ? 1.25 : undefined,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

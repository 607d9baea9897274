/**
 * @module Scenario: `hooks serve` (default config), POST /hooks/wake `{ "text": "hi", "mode": "next-heartbeat" }`
 * (validate, journal, wrap, queue a system event) against the bare and the durable baseline. Target: at least
 * 0.60x the durable baseline's req/s.
 */
import { TARGETS } from "../lib/baselines.mjs";
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
      durableTarget: TARGETS.wake,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

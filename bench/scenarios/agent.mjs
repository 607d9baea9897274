/**
 * @module Scenario: POST /hooks/agent, the 202 path; every request is a real turn the echo runner answers and the
 * session subsystem records. Target: at least 0.40x the durable baseline's req/s.
 */
import { TARGETS } from "../lib/baselines.mjs";
import { AGENT_BODY, jsonRequest } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

export const scenario = {
  id: "agent",
  title: "/agent (202, echo runner)",
  // No sessionKey in the body: each request gets its own `hook:<uuid>` session, as a bare /agent call does.
  run: (context) =>
    gatewayVsBaseline(context, {
      id: "agent",
      title: "/agent (202, echo runner)",
      request: jsonRequest(context.token, "agent", AGENT_BODY),
      expectStatus: 202,
      durableTarget: TARGETS.agent,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

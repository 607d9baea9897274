/** @module Scenario: a mapped hook with a TypeScript transform (fixtures/transforms/github-push.ts via jiti) returning an agent turn. */
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
      rpsTarget: 0.6,
    }),
};

if (isMain(import.meta.url)) await runStandalone(scenario);

/** @module Scenario: a GitHub-signed mapping (push payload, `X-Hub-Signature-256`, a new `X-GitHub-Delivery` each request) against the baseline. */
import { githubSignedRequest, PUSH_PAYLOAD, withToken, writeSignedConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { gatewayVsBaseline } from "../lib/gateway-vs-baseline.mjs";

export const scenario = {
  id: "signed-github",
  title: "signed mapping (GitHub), unique deliveries",
  // The template mapping's work plus the HMAC over the 8.8 KB body and a delivery-id claim in the in-memory store
  // (below its bound; what the bound costs is wake-idempotency's). The baseline gets the same headers and the token.
  run(context) {
    const request = githubSignedRequest(PUSH_PAYLOAD);
    return gatewayVsBaseline(context, {
      id: "signed-github",
      title: "signed mapping (GitHub), unique deliveries",
      configFile: writeSignedConfig(context.dir, context.token),
      request,
      baselineRequest: withToken(request, context.token),
      expectStatus: 200,
      // Not a lean-core row: its older target, against the bare baseline.
      bareTarget: 0.7,
      firstDeliveries: true,
    });
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

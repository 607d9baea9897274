/** @module Scenario: the template mapping behind 9,999 others against the same gateway with that one mapping (index, not scan). */
import { jsonRequest, PUSH_PAYLOAD, writeManyMappingsConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { runPairs } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

export const MANY = 10_000;

export const scenario = {
  id: "mappings-10k",
  title: "10,000 mappings vs 1",
  async run(context) {
    const many = await context.startGateway({
      label: `gateway (${MANY} mappings)`,
      configFile: writeManyMappingsConfig(context.dir, context.token, MANY),
    });
    const one = await context.startGateway({
      label: "gateway (1 mapping)",
      configFile: writeManyMappingsConfig(context.dir, context.token, 1),
    });
    context.log(
      `  ready in ${Math.round(many.readyMs)} ms (${MANY} mappings) and ${Math.round(one.readyMs)} ms (1 mapping)`,
    );
    try {
      const request = jsonRequest(context.token, "github/push", PUSH_PAYLOAD);
      const pairs = await runPairs({
        target: { server: many, request, expectStatus: 200 },
        baseline: { server: one, request, expectStatus: 200 },
        settings: context.settings,
        log: context.log,
      });
      return pairRows({
        id: "mappings-10k",
        title: `mapped hook, ${MANY.toLocaleString("en-US")} mappings vs 1`,
        pairs,
        rpsTarget: 0.9,
        baselineName: "same gateway, 1 mapping",
        extra: { readyMs: { many: Math.round(many.readyMs), one: Math.round(one.readyMs) } },
      });
    } finally {
      await Promise.all([many.stop(), one.stop()]);
    }
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

/** @module Diagnostic: what the gateway's per-request log lines cost, the same gateway at info level against warn level. */
import { AGENT_BODY, jsonRequest, WAKE_BODY } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { runPairs } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

const CASES = [
  { id: "wake", hook: "wake", body: WAKE_BODY, status: 200, note: "1 info line per request" },
  { id: "agent", hook: "agent", body: AGENT_BODY, status: 202, note: "2 info lines per request" },
];

export const scenario = {
  id: "log-cost",
  title: "request logging on vs off (diagnostic)",
  async run(context) {
    const rows = [];
    for (const item of CASES) {
      context.log(`  ${item.id}: info (A) vs HOOKS_LOG_LEVEL=warn (B)`);
      const logging = await context.startGateway({ label: `gateway (${item.id}, info)` });
      const quiet = await context.startGateway({
        label: `gateway (${item.id}, warn)`,
        env: { HOOKS_LOG_LEVEL: "warn" },
      });
      try {
        const request = jsonRequest(context.token, item.hook, item.body);
        const pairs = await runPairs({
          target: { server: logging, request, expectStatus: item.status },
          baseline: { server: quiet, request, expectStatus: item.status },
          settings: context.settings,
          log: context.log,
        });
        rows.push(
          ...pairRows({
            id: `log-cost.${item.id}`,
            title: `/${item.id}, logging at info vs warn (${item.note})`,
            pairs,
            rpsTarget: undefined,
            p99Target: null,
            baselineName: "same gateway, HOOKS_LOG_LEVEL=warn",
          }).filter((row) => !row.id.endsWith(".p99")),
        );
      } finally {
        await Promise.all([logging.stop(), quiet.stop()]);
      }
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

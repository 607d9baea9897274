/** @module Scenario: `hooks serve` from spawn to its ready line, five cold starts of the bench config, median. */
import { isMain, runStandalone } from "../lib/context.mjs";
import { median } from "../lib/load.mjs";
import { valueRow } from "../lib/report.mjs";

const RUNS = 5;

async function startTimes(context, configFile, label) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const gateway = await context.startGateway({ label: `gateway (${label} ${i + 1})`, configFile });
    times.push(gateway.readyMs);
    await gateway.stop();
  }
  context.log(`  ${label}: ${times.map((ms) => `${Math.round(ms)} ms`).join(", ")}`);
  return times;
}

export const scenario = {
  id: "startup",
  title: "hooks serve: start to ready",
  async run(context) {
    const times = await startTimes(context, context.configFile, "bench config");
    const rows = [
      valueRow({
        id: "startup",
        title: `hooks serve: start to ready (${RUNS} runs, median)`,
        value: median(times) / 1000,
        unit: "s",
        digits: 3,
        values: times.map((ms) => ms / 1000),
        target: { op: "<=", value: 1 },
        detail:
          "spawn of `node bin/hooks.js serve` to its ready line; bench config (template + TS transform mapping)",
      }),
    ];
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

/** @module Scenario: `hooks serve` from spawn to its ready line, five cold starts of the bench config, median. */
import { writeFixtureTransformConfig } from "../lib/configs.mjs";
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
    if (process.env.BENCH_DIAGNOSTICS !== "0") {
      const fixture = await startTimes(
        context,
        writeFixtureTransformConfig(context.dir, context.token),
        "fixture transform",
      );
      rows.push(
        valueRow({
          id: "startup.fixture-transform",
          title: "start to ready, fixtures/transforms/github-push.ts instead (diagnostic)",
          value: median(fixture) / 1000,
          unit: "s",
          digits: 3,
          values: fixture.map((ms) => ms / 1000),
          detail:
            "the fixture imports defineTransform from ../../src/index.js as a value: jiti compiles the plugin's source tree",
        }),
      );
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

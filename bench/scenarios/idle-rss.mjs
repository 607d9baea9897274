/** @module Scenario: resident memory of a gateway that has started and is idle (bench config, transform loaded). */
import { isMain, runStandalone } from "../lib/context.mjs";
import { median } from "../lib/load.mjs";
import { readRss, sleep } from "../lib/processes.mjs";
import { valueRow } from "../lib/report.mjs";

const RUNS = 3;
const SETTLE_MS = 1_000;
const MB = 1_000_000;

export const scenario = {
  id: "idle-rss",
  title: "idle RSS after start",
  async run(context) {
    const values = [];
    for (let i = 0; i < RUNS; i++) {
      const gateway = await context.startGateway({ label: `gateway (idle ${i + 1})` });
      await sleep(SETTLE_MS);
      values.push((readRss(gateway.pid) ?? Number.NaN) / MB);
      await gateway.stop();
    }
    context.log(`  idle RSS: ${values.map((mb) => `${mb.toFixed(1)} MB`).join(", ")}`);
    return [
      valueRow({
        id: "idle-rss",
        title: `idle RSS after start (${RUNS} starts, median)`,
        value: median(values),
        unit: "MB",
        values,
        target: { op: "<=", value: 80 },
        detail: `VmRSS ${SETTLE_MS / 1000} s after the ready line, no traffic; bench config`,
      }),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

/**
 * @module Scenario: what the Prometheus metrics cost on /wake: one build, `server.metrics: true` (the default)
 * against `false`, A B A B. Target: at least 0.95x the req/s and at most 1.05x the CPU per request of the gateway
 * without metrics. The metrics side is scraped once before the runs, so the process metrics a scrape starts (the
 * event-loop monitor, the GC observer) run during the measurement as they would under Prometheus.
 */
import { jsonRequest, WAKE_BODY, writeMetricsConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { runPairs } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

export const scenario = {
  id: "wake-metrics",
  title: "/wake with metrics vs without",
  async run(context) {
    const request = jsonRequest(context.token, "wake", WAKE_BODY);
    const on = await context.startGateway({
      label: "gateway (metrics on)",
      configFile: writeMetricsConfig(context.dir, context.token, true),
    });
    let off;
    let pairs;
    try {
      off = await context.startGateway({
        label: "gateway (metrics off)",
        configFile: writeMetricsConfig(context.dir, context.token, false),
      });
      const scrape = await fetch(`${on.url}/metrics`);
      await scrape.arrayBuffer();
      if (scrape.status !== 200) throw new Error(`GET /metrics answered ${scrape.status}`);
      pairs = await runPairs({
        target: { server: on, request, expectStatus: 200 },
        baseline: { server: off, request, expectStatus: 200 },
        settings: context.settings,
        log: context.log,
      });
    } finally {
      await Promise.all([on.stop("SIGTERM"), off?.stop("SIGTERM")]);
    }
    return pairRows({
      id: "wake-metrics",
      title: "/wake, metrics on vs off",
      pairs,
      rpsTarget: 0.95,
      cpuTarget: 1.05,
      p99Target: null,
      baselineName: "same build, server.metrics: false",
    });
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

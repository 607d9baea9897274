/**
 * @module Scenario: what the Prometheus metrics cost on /wake: one build, `server.metrics: true` (the default)
 * against `false` (the plugin then counts nothing, `createHooksPlugin({ metrics: false })`, and no `/metrics` is
 * served). Target: at least 0.95x the req/s and at most 1.05x the CPU per request of the gateway without metrics.
 * The metrics side is scraped once before the runs, so the process metrics a scrape starts (the event-loop
 * monitor, the GC observer) run during the measurement as they would under Prometheus.
 *
 * A 5 % difference is within one pair's noise on this kind of machine, so the run also holds a second gateway
 * without metrics (diagnostic, BENCH_DIAGNOSTICS=0 leaves it out): off against off in the same rounds is the
 * noise floor the on/off ratios are read against. Rounds of the three (`runRounds`, BENCH_PAIRS of them, the
 * order turned by one each round), each ratio within its round.
 */
import { jsonRequest, scrapeMetrics, WAKE_BODY, writeMetricsConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { pairsOf, runRounds } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

export const scenario = {
  id: "wake-metrics",
  title: "/wake with metrics vs without",
  async run(context) {
    const request = jsonRequest(context.token, "wake", WAKE_BODY);
    const offConfig = writeMetricsConfig(context.dir, context.token, false);
    const started = [];
    const gateway = async (label, configFile) => {
      const handle = await context.startGateway({ label, configFile });
      started.push(handle);
      return handle;
    };
    let rounds;
    try {
      const on = await gateway("gateway (metrics on)", writeMetricsConfig(context.dir, context.token, true));
      const sides = [
        { name: "on", server: on, request, expectStatus: 200 },
        {
          name: "off",
          server: await gateway("gateway (metrics off)", offConfig),
          request,
          expectStatus: 200,
        },
      ];
      if (context.settings.diagnostics) {
        const again = await gateway("gateway (metrics off, second)", offConfig);
        sides.push({ name: "off-again", server: again, request, expectStatus: 200 });
      }
      await scrapeMetrics(on);
      rounds = await runRounds({
        sides,
        rounds: context.settings.pairs,
        settings: context.settings,
        log: context.log,
      });
    } finally {
      await Promise.all(started.map((handle) => handle.stop("SIGTERM")));
    }
    const rows = pairRows({
      id: "wake-metrics",
      title: "/wake, metrics on vs off",
      pairs: pairsOf(rounds, "on", "off"),
      rpsTarget: 0.95,
      cpuTarget: 1.05,
      p99Target: null,
      baselineName: "same build, server.metrics: false",
    });
    if (!context.settings.diagnostics) return rows;
    return [
      ...rows,
      ...pairRows({
        id: "wake-metrics.noise",
        title: "/wake, metrics off vs off, a second gateway (A/A, diagnostic)",
        pairs: pairsOf(rounds, "off-again", "off"),
        p99Target: null,
        baselineName: "the first gateway without metrics",
      }).filter((row) => !row.id.endsWith(".p99")),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

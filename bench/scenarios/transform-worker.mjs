/**
 * @module Scenario: the TypeScript transform mapping (`github/push-ts`, fixtures/transforms/github-push.ts, an
 * agent turn) with `transform.isolate: "worker"` (the default: the pool of worker threads) and with `"inline"`
 * (the gateway's own thread), beside plain `/wake` and the bare and durable baselines, all in one run: rounds of
 * every side (`runRounds`), each side's ratios taken against the baselines of the same round. Target:
 * the worker side at least 0.30x the durable baseline's req/s (the baselines sent the same 8.8 KB push body). The
 * inline side and `/wake` are diagnostic (BENCH_DIAGNOSTICS=0 leaves them out): together they show what the thread
 * boundary costs (worker against inline, same round) and what the mapping's own work costs over the pipeline's
 * fixed part (`/wake`, against the baselines sent the wake body).
 *
 * Pinned, `taskset` pins the whole gateway process, so the pool's threads (and V8's and libuv's helper threads)
 * run on the gateway's core too, and its CPU per request (/proc/<pid>/stat, every thread) counts the workers'
 * time: nothing runs in parallel, which is the honest setting for the cost. `BENCH_PIN=0` shows what a second
 * core gives back. One gateway per side, each with a fresh state directory; the transform's agent turns all
 * continue one session (`hook:github:Codertocat/Hello-World`), as in `mapped-transform`.
 */
import { baselineRows, baselineSides, logBaselineRatios, TARGETS } from "../lib/baselines.mjs";
import { jsonRequest, PUSH_PAYLOAD, WAKE_BODY, writeTransformIsolateConfig } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { pairsOf, runRounds, stats } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

const TRANSFORM_PATH = "github/push-ts";
const round1 = (value) => Math.round(value * 10) / 10;

export const scenario = {
  id: "transform-worker",
  title: "mapped hook, TS transform: worker pool vs inline vs /wake",
  async run(context) {
    const { diagnostics } = context.settings;
    const transformRequest = jsonRequest(context.token, TRANSFORM_PATH, PUSH_PAYLOAD);
    const wakeRequest = jsonRequest(context.token, "wake", WAKE_BODY);
    const started = [];
    try {
      const gateway = async (label, configFile) => {
        const handle = await context.startGateway({ label, configFile });
        started.push(handle);
        context.log(`  ${label} ready in ${Math.round(handle.readyMs)} ms at ${handle.url}`);
        return handle;
      };
      const sides = [
        {
          name: "worker",
          server: await gateway(
            'gateway (isolate "worker")',
            writeTransformIsolateConfig(context.dir, context.token, "worker"),
          ),
          request: transformRequest,
          expectStatus: 202,
        },
        ...(await baselineSides(context, transformRequest)),
      ];
      if (diagnostics) {
        sides.push(
          {
            name: "inline",
            server: await gateway(
              'gateway (isolate "inline")',
              writeTransformIsolateConfig(context.dir, context.token, "inline"),
            ),
            request: transformRequest,
            expectStatus: 202,
          },
          { name: "wake", server: await gateway("gateway (/wake)"), request: wakeRequest, expectStatus: 200 },
          ...(await baselineSides(context, wakeRequest, "wake-")),
        );
      }
      // The two transform sides next to each other within a round.
      const ORDER = ["worker", "inline", "bare", "durable", "wake", "wake-bare", "wake-durable"];
      sides.sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name));
      context.log(
        `  rounds of ${sides.map((side) => side.name).join(", ")} (${context.settings.pairs} rounds)`,
      );
      const rounds = await runRounds({
        sides,
        rounds: context.settings.pairs,
        settings: context.settings,
        log: context.log,
      });
      const workerTitle = 'mapped hook, TS transform, isolate "worker"';
      const rows = baselineRows({
        id: "transform-worker.worker",
        title: workerTitle,
        rounds,
        side: "worker",
        durableTarget: TARGETS.transformWorker,
        note: ", push body",
      });
      logBaselineRatios(context.log, workerTitle, rows);
      if (!diagnostics) return rows;
      const inline = baselineRows({
        id: "transform-worker.inline",
        title: 'mapped hook, TS transform, isolate "inline" (diagnostic)',
        rounds,
        side: "inline",
        note: ", push body",
      });
      const wake = baselineRows({
        id: "transform-worker.wake",
        title: "/wake, same rounds (diagnostic)",
        rounds,
        side: "wake",
        bare: "wake-bare",
        durable: "wake-durable",
        note: ", wake body",
      });
      logBaselineRatios(context.log, 'isolate "inline"', inline);
      logBaselineRatios(context.log, "/wake", wake);
      rows.push(...inline, ...wake);
      // The thread boundary itself: worker against inline in the same round, as a ratio and in µs per request.
      const extraUs = rounds.map(
        (round) => round.worker.serverCpuUsPerRequest - round.inline.serverCpuUsPerRequest,
      );
      const extra = stats(extraUs);
      context.log(
        `  worker - inline: ${round1(extra.median)} µs server CPU per request (${round1(extra.min)} to ${round1(extra.max)})`,
      );
      rows.push(
        ...pairRows({
          id: "transform-worker.worker-vs-inline",
          title: 'TS transform, isolate "worker" vs "inline" (diagnostic)',
          pairs: pairsOf(rounds, "worker", "inline"),
          p99Target: null,
          baselineName: 'isolate "inline"',
          extra: {
            workerExtraUsPerRequest: {
              min: round1(extra.min),
              median: round1(extra.median),
              max: round1(extra.max),
              all: extraUs.map(round1),
            },
          },
        }).filter((row) => !row.id.endsWith(".p99")),
      );
      return rows;
    } finally {
      await Promise.all(started.map((handle) => handle.stop()));
    }
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

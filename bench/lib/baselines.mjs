/**
 * @module The two baselines every throughput scenario is read against, measured in the same rounds as the sides
 * under test (`runRounds`), and the lean-core targets.
 *
 * - bare: bench/baseline-server.mjs, a node:http server that reads the body, checks the bearer token in constant
 *   time, parses the JSON and answers: the least any intake must do.
 * - durable: the same server with BENCH_BASELINE_JOURNAL set: one JSON line per request appended to a file, the
 *   answers sent after one fdatasync covering all lines of that event-loop turn (group commit): the least an
 *   intake that never loses an acknowledged request can do. The lean-core targets are ratios to this one.
 *
 * Both get exactly the request the side under test gets (the same path, headers and body).
 */
import { fmtRps, pairsOf } from "./load.mjs";
import { pairRows } from "./report.mjs";

export const TARGET_SOURCE = "lean-core target";

/** The lean-core throughput targets, each a ratio to the durable baseline (OpenClaw's: to the floor plugin in the same gateway). */
export const TARGETS = {
  /** The plugin on a minimal host (journal on, fsync batch; the host only counts events). */
  minimalHost: 0.8,
  /** `hooks serve`, default config, `/wake`. */
  wake: 0.6,
  /** `hooks serve`, a template mapping. */
  template: 0.5,
  /** `hooks serve`, `/agent` (echo runner). */
  agent: 0.4,
  /** `hooks serve`, a TypeScript transform in a worker. */
  transformWorker: 0.3,
  /**
   * This plugin's `/wake` inside OpenClaw against the floor plugin in the same gateway (bench/openclaw-floor/: a route
   * that reads the body, checks the token, parses and queues one system event). OpenClaw's own `/hooks/wake` skips
   * what every plugin route pays, so it is shown beside it, not used as the bar.
   */
  openclaw: 0.9,
};

/**
 * The two baseline sides for `runRounds`, named `bare` and `durable` (or `${prefix}bare`, `${prefix}durable`),
 * sent `request`.
 */
export async function baselineSides(context, request, prefix = "") {
  return [
    { name: `${prefix}bare`, server: await context.baseline(), request, expectStatus: 200 },
    { name: `${prefix}durable`, server: await context.durableBaseline(), request, expectStatus: 200 },
  ];
}

/**
 * Rows of side `side` against both baselines of the same rounds: throughput, server CPU per request and p99
 * against the durable baseline (`durableTarget`, a lean-core target, judges the throughput), then throughput and
 * server CPU per request against the bare one (`bareTarget` judges its throughput: an older target, for the rows
 * the lean-core targets do not name). `note` is added to the baselines' names (e.g. ", push body").
 */
export function baselineRows({
  id,
  title,
  rounds,
  side,
  bare = "bare",
  durable = "durable",
  durableTarget,
  bareTarget,
  note = "",
  extra = {},
}) {
  return [
    ...pairRows({
      id: `${id}.durable`,
      title: `${title} vs durable baseline`,
      pairs: pairsOf(rounds, side, durable),
      rpsTarget: durableTarget,
      p99Target: null,
      baselineName: `durable baseline${note}`,
      targetSource: TARGET_SOURCE,
      extra,
    }),
    ...pairRows({
      id: `${id}.bare`,
      title: `${title} vs bare baseline`,
      pairs: pairsOf(rounds, side, bare),
      rpsTarget: bareTarget,
      p99Target: null,
      baselineName: `bare node:http${note}`,
      extra,
    }).filter((row) => !row.id.endsWith(".p99")),
  ];
}

/** One line per side: its throughput ratios to both baselines (medians over the rounds) and the target. */
export function logBaselineRatios(log, title, rows) {
  const throughput = (suffix) => rows.find((row) => row.id.endsWith(`.${suffix}.throughput`));
  const durable = throughput("durable");
  const bare = throughput("bare");
  if (!durable || !bare) return;
  const target = durable.target
    ? ` (target >= ${durable.target.value.toFixed(2)}x, ${durable.target.source}: ${durable.pass ? "met" : "NOT met"})`
    : "";
  log(
    `  => ${title}: ${fmtRps(durable.targetSide.rps)} req/s, ${durable.value.toFixed(2)}x the durable baseline` +
      `${target}, ${bare.value.toFixed(2)}x the bare baseline` +
      ` (durable ${fmtRps(durable.baselineSide.rps)}, bare ${fmtRps(bare.baselineSide.rps)} req/s)`,
  );
}

/** @module Scenario: /wake with a new Idempotency-Key on every request against /wake without one, two gateways of one build, A B A B. */
import {
  DEFAULT_MAX_DELIVERIES,
  jsonRequest,
  UNREACHED_MAX_DELIVERIES,
  WAKE_BODY,
  writeDedupeConfig,
} from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { checkAllFirst, checkReplay } from "../lib/deliveries.mjs";
import { fmtRps, measure, runPairs } from "../lib/load.mjs";
import { pairRows } from "../lib/report.mjs";

const FILL_SECONDS = 2;
const TITLE = "/wake, a new Idempotency-Key each request vs none";

/**
 * Both sides send one header that changes on every request, so the client builds every request anew on both and
 * the bytes match: the key's side `Idempotency-Key`, the other `X-Bench-Nonce`, which the gateway ignores.
 */
function requests(token) {
  const base = jsonRequest(token, "wake", WAKE_BODY);
  return {
    keyed: { ...base, uniqueHeaders: ["idempotency-key"] },
    plain: { ...base, uniqueHeaders: ["x-bench-nonce"] },
  };
}

/** A B A B keyed against plain; every keyed request must have been a first delivery (one wake each). */
async function keyedVsPlain(context, keyed, plain, request, { id, title, extra = {} }) {
  let answered = 0;
  let runs = 0;
  await checkReplay(keyed, request.keyed, 200);
  const pairs = await runPairs({
    target: { server: keyed, request: request.keyed, expectStatus: 200 },
    baseline: { server: plain, request: request.plain, expectStatus: 200 },
    settings: context.settings,
    log: context.log,
    onRun: (side, run) => {
      if (side !== "target") return;
      answered += run.requests;
      runs++;
    },
  });
  const rows = pairRows({
    id,
    title,
    pairs,
    rpsTarget: 0.95,
    cpuTarget: 1.05,
    p99Target: null,
    baselineName: "same build, /wake without Idempotency-Key",
    extra: { ...extra, keyedRequests: answered },
  });
  return { rows, answered, runs };
}

export const scenario = {
  id: "wake-idempotency",
  title: "/wake with Idempotency-Key vs without",
  async run(context) {
    const request = requests(context.token);
    const connections = context.settings.connections;
    const rows = [];

    // 1. The claim below the store's bound: a bound no run reaches, the same config on both sides.
    context.log(
      `  below the store's bound (hooks.dedupe.maxEntries ${UNREACHED_MAX_DELIVERIES.toLocaleString("en-US")})`,
    );
    const configFile = writeDedupeConfig(context.dir, context.token, UNREACHED_MAX_DELIVERIES);
    const plain = await context.startGateway({ label: "gateway (/wake, no key)", configFile });
    try {
      const keyed = await context.startGateway({ label: "gateway (/wake, Idempotency-Key)", configFile });
      let below;
      try {
        below = await keyedVsPlain(context, keyed, plain, request, {
          id: "wake-idempotency",
          title: TITLE,
          extra: { maxDeliveries: UNREACHED_MAX_DELIVERIES },
        });
      } finally {
        await keyed.stop();
      }
      const wakes = checkAllFirst(keyed, { answered: below.answered, runs: below.runs, connections });
      context.log(
        `  ${wakes} wakes for ${below.answered} answered keyed requests: every one a first delivery`,
      );
      rows.push(...below.rows);

      // 2. The default store full: 100,000 ids claimed first, so that every new key lands past the bound.
      context.log(`  at the default bound: ${DEFAULT_MAX_DELIVERIES.toLocaleString("en-US")} ids first`);
      const full = await context.startGateway({ label: "gateway (/wake, Idempotency-Key, full store)" });
      let atBound;
      let filled = 0;
      let fillRuns = 0;
      let fillSeconds = 0;
      try {
        while (filled < DEFAULT_MAX_DELIVERIES) {
          const run = await measure(full, request.keyed, FILL_SECONDS);
          if (run.statuses[200] !== run.requests || run.errors > 0) {
            throw new Error(
              `${full.label}: filling the store: statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}`,
            );
          }
          filled += run.requests;
          fillRuns++;
          fillSeconds += run.elapsedSeconds;
        }
        context.log(
          `  ${filled.toLocaleString("en-US")} ids claimed in ${fillSeconds.toFixed(1)} s (${fmtRps(filled / fillSeconds)} req/s)`,
        );
        atBound = await keyedVsPlain(context, full, plain, request, {
          id: "wake-idempotency.full",
          title: `${TITLE}, default store full (${DEFAULT_MAX_DELIVERIES.toLocaleString("en-US")} ids)`,
          extra: { maxDeliveries: DEFAULT_MAX_DELIVERIES, filledFirst: filled },
        });
      } finally {
        await full.stop();
      }
      checkAllFirst(full, {
        answered: filled + atBound.answered,
        runs: fillRuns + atBound.runs,
        connections,
      });
      rows.push(...atBound.rows);
    } finally {
      await plain.stop();
    }
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);

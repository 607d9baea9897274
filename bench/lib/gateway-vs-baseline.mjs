/** @module The shape of the throughput scenarios: one fresh gateway against the baseline, A B A B, two rows out. */
import { checkAllFirst, checkReplay } from "./deliveries.mjs";
import { runPairs } from "./load.mjs";
import { pairRows } from "./report.mjs";
import { countSessions } from "./state.mjs";

/**
 * `configFile` (default: the bench config) and `baselineRequest` (default: `request`) for a gateway request the
 * baseline would refuse (a signature instead of the token). With `firstDeliveries`, `request` names a unique id
 * header: the replay of one id is checked before the runs and, after them, that every request was a first
 * delivery (one wake each).
 */
export async function gatewayVsBaseline(
  context,
  {
    id,
    title,
    request,
    baselineRequest = request,
    configFile,
    expectStatus,
    rpsTarget,
    cpuTarget,
    p99Target,
    env,
    firstDeliveries = false,
  },
) {
  const baseline = await context.baseline();
  const gateway = await context.startGateway({ label: `gateway (${id})`, env, configFile });
  context.log(`  gateway ready in ${Math.round(gateway.readyMs)} ms at ${gateway.url}`);
  let extra;
  let pairs;
  let answered = 0;
  let runs = 0;
  try {
    if (firstDeliveries) await checkReplay(gateway, request, expectStatus);
    const linesBefore = gateway.stdoutLines;
    const bytesBefore = gateway.stdoutBytes;
    pairs = await runPairs({
      target: { server: gateway, request, expectStatus },
      baseline: { server: baseline, request: baselineRequest, expectStatus: 200 },
      settings: context.settings,
      log: context.log,
      onRun: (side, run) => {
        if (side !== "target") return;
        answered += run.requests;
        runs++;
      },
    });
    const measured = pairs.reduce((sum, pair) => sum + pair.target.requests, 0);
    // Includes the baseline halves of the pairs, when the gateway only finishes what it already accepted.
    extra = {
      logLinesPerRequest: Math.round(((gateway.stdoutLines - linesBefore) / measured) * 100) / 100,
      logBytesPerRequest: Math.round((gateway.stdoutBytes - bytesBefore) / measured),
      bodyBytes: Buffer.byteLength(request.body),
    };
  } finally {
    // Stopped before the count: a graceful stop writes out what the gateway still held.
    await gateway.stop();
  }
  // Session keys with messages in state.sqlite (one per /agent request without a sessionKey).
  extra.sessions = countSessions(gateway.stateDir);
  if (firstDeliveries) {
    const wakes = checkAllFirst(gateway, { answered, runs, connections: context.settings.connections });
    context.log(`  ${wakes} wakes for ${answered} answered requests: every one a first delivery`);
    extra.deliveryIds = answered;
  }
  return pairRows({
    id,
    title,
    pairs,
    rpsTarget,
    cpuTarget,
    p99Target,
    baselineName: "bare node:http",
    extra,
  });
}

/**
 * @module The shape of the throughput scenarios: one fresh gateway against the bare and the durable baseline, in
 * rotating rounds of the three (`runRounds`: gateway, bare, durable; then bare, durable, gateway; ...), rows
 * against each baseline out.
 */
import { baselineRows, baselineSides, logBaselineRatios } from "./baselines.mjs";
import { checkAllFirst, checkReplay } from "./deliveries.mjs";
import { runRounds } from "./load.mjs";
import { countSessions } from "./state.mjs";

/**
 * `configFile` (default: the bench config) and `baselineRequest` (default: `request`) for a gateway request the
 * baselines would refuse (a signature instead of the token). `durableTarget`: the lean-core throughput target
 * against the durable baseline; `bareTarget`: an older throughput target against the bare one (rows the lean-core targets do not
 * name). With `firstDeliveries`, `request` names a unique id header: the replay of one id is checked before the
 * runs and, after them, that every request was a first delivery (one wake each).
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
    durableTarget,
    bareTarget,
    env,
    firstDeliveries = false,
  },
) {
  const baselines = await baselineSides(context, baselineRequest);
  const gateway = await context.startGateway({ label: `gateway (${id})`, env, configFile });
  context.log(`  gateway ready in ${Math.round(gateway.readyMs)} ms at ${gateway.url}`);
  let extra;
  let rounds;
  let answered = 0;
  let runs = 0;
  try {
    if (firstDeliveries) await checkReplay(gateway, request, expectStatus);
    const linesBefore = gateway.stdoutLines;
    const bytesBefore = gateway.stdoutBytes;
    rounds = await runRounds({
      sides: [{ name: "gateway", server: gateway, request, expectStatus }, ...baselines],
      rounds: context.settings.pairs,
      settings: context.settings,
      log: context.log,
      onRun: (side, run) => {
        if (side.name !== "gateway") return;
        answered += run.requests;
        runs++;
      },
    });
    const measured = rounds.reduce((sum, round) => sum + round.gateway.requests, 0);
    // Includes the baselines' turns of the rounds, when the gateway only finishes what it already accepted.
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
  const rows = baselineRows({ id, title, rounds, side: "gateway", durableTarget, bareTarget, extra });
  logBaselineRatios(context.log, title, rows);
  return rows;
}

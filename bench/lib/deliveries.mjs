/** @module Delivery ids under load: a gateway's replay checked before a run, its emitted wakes counted after (every request a first delivery). */
import { countWakes } from "./state.mjs";

export { countWakes };

const REPLAY_HEADER = "idempotent-replay";

async function send(server, request, headers) {
  const response = await fetch(new URL(request.path, server.url), {
    method: "POST",
    headers: { ...request.headers, ...headers },
    body: request.body,
  });
  await response.arrayBuffer();
  return { status: response.status, replay: response.headers.get(REPLAY_HEADER) };
}

/**
 * Sends `request` twice with the same value in its first unique header: the first must be answered afresh, the
 * second as a replay. Proves that the scenario's requests take the duplicate check at all (a missed id header, a
 * mapping that does not match, a signature the gateway refuses) before any figure is taken. Emits one wake.
 */
export async function checkReplay(server, request, expectStatus) {
  const [header] = request.uniqueHeaders ?? [];
  if (!header) throw new Error("checkReplay: the request names no unique header");
  const id = `bench-probe-${process.pid}-${Date.now()}`;
  const first = await send(server, request, { [header]: id });
  const second = await send(server, request, { [header]: id });
  if (
    first.status !== expectStatus ||
    first.replay !== null ||
    second.status !== expectStatus ||
    second.replay !== "true"
  ) {
    throw new Error(
      `${server.label}: ${header} is not deduplicated: first ${first.status} (replay ${first.replay}), ` +
        `second ${second.status} (replay ${second.replay}); expected ${expectStatus}, then ${expectStatus} with Idempotent-Replay: true`,
    );
  }
}

/**
 * Throws unless the stopped gateway emitted a wake for every answered request (and the probe's): none was a
 * replay. Up to `connections` more per run are fine: requests in flight when autocannon stopped, served unanswered.
 */
export function checkAllFirst(gateway, { answered, runs, connections }) {
  const wakes = countWakes(gateway.stateDir);
  const least = answered + 1;
  const most = least + runs * connections;
  if (wakes < least || wakes > most) {
    throw new Error(
      `${gateway.label}: ${wakes} wakes emitted for ${answered} answered requests and the probe's 1 ` +
        `(expected ${least} to ${most}): ${wakes < least ? "some requests were replays" : "unexplained wakes"}`,
    );
  }
  return wakes;
}

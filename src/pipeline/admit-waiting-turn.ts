/** @module A queued turn's admission as it leaves its queue: a host's "not now" is asked again after a pause, within the turn's own timeout; only a refusal that stands ends it. */
import { setTimeout as sleep } from "node:timers/promises";
import type { PendingRun } from "../actions/plan-action.js";
import { type HookError, toHookError } from "../errors.js";
import type { AgentTurn } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import { type AdmitAgentTurn, admitAgentTurns } from "./admit-turns.js";

/** Pause before asking again when the host names none: OpenClaw swaps its registrations within a few seconds. */
const RETRY_MS = 1_000;

/**
 * `admitted`: the host runs it. `stopping`: the service stops (or stopped) meanwhile, and the turn stays un-handed in
 * the journal for the next start, which asks again with the same run id. `refused`: the summary's words.
 */
export type WaitingAdmission =
  | { kind: "admitted" }
  | { kind: "stopping" }
  | { kind: "refused"; error: string };

export interface WaitingTurn {
  run: PendingRun;
  turn: AgentTurn | undefined;
  /** False once the service pauses or stops: the turn goes back to the journal. */
  open: () => boolean;
}

/**
 * The sender was told 202 queued, so a refusal that may pass is not the turn's outcome: `unavailable` (draining for
 * a reload) and no answer in time are asked again, after the host's `retryAfterSeconds` when it gave one, until the
 * turn's `timeoutSeconds` have passed since the first ask. A session conflict or a refusal ends it at once.
 */
export async function admitWaitingTurn(
  deps: { admit: AdmitAgentTurn; timeoutMs: number; logger: HostLogger },
  { run, turn, open }: WaitingTurn,
): Promise<WaitingAdmission> {
  const giveUpAt = Date.now() + run.timeoutSeconds * 1000;
  const fields = { runId: run.runId, requestId: run.source.requestId };
  for (let asked = 1; ; asked++) {
    try {
      await admitAgentTurns(deps.admit, turn === undefined ? [] : [turn], deps.timeoutMs);
      return open() ? { kind: "admitted" } : { kind: "stopping" };
    } catch (error) {
      if (!open()) return { kind: "stopping" };
      const refusal = toHookError(error);
      const cause = refusal.cause instanceof Error ? `: ${refusal.cause.message}` : "";
      if (refusal.code !== "TURN_NOT_ADMITTED") {
        deps.logger.warn(`the gateway did not start a waiting agent turn: ${refusal.code}${cause}`, fields);
        return { kind: "refused", error: `not started: ${refusal.message}` };
      }
      const waitMs = retryMs(refusal);
      if (Date.now() + waitMs >= giveUpAt) {
        deps.logger.warn(
          `the gateway did not admit a waiting agent turn within its ${run.timeoutSeconds} s${cause}`,
          fields,
        );
        return { kind: "refused", error: `not started within ${run.timeoutSeconds} s: ${refusal.message}` };
      }
      if (asked === 1) {
        deps.logger.info(`the gateway is not admitting agent turns now; a waiting turn asks again${cause}`, {
          ...fields,
          retryMs: waitMs,
        });
      }
      // A stopping process does not wait for it: the turn is in the journal.
      await sleep(waitMs, undefined, { ref: false });
      if (!open()) return { kind: "stopping" };
    }
  }
}

/** The host's own figure (`retryAfterSeconds` on an `unavailable` refusal), else a second. */
function retryMs(refusal: HookError): number {
  const seconds = (refusal.cause as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof seconds === "number" && seconds > 0 ? seconds * 1000 : RETRY_MS;
}

/** @module A queued turn's admission as it leaves its queue: a host's "not now" is asked again after a pause, within the turn's own timeout; only a refusal that stands ends it. */
import { setTimeout as sleep } from "node:timers/promises";
import type { PendingRun } from "../actions/plan-action.js";
import { type HookError, toHookError } from "../errors.js";
import type { AgentTurn } from "../events.js";
import type { HostLogger, TurnNotAdmitted } from "../host/contract.js";
import { type AdmitAgentTurn, admitAgentTurns } from "./admit-turns.js";

/** Pause before asking again when the host names none: OpenClaw swaps its registrations within a few seconds. */
const RETRY_MS = 1_000;
/** The host's own figure is kept within these: never a busy loop of asks, never longer than a minute between them. */
const MIN_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
/** Whether a refusal may pass: the host is not admitting now, or the session is between states (after its restart). */
function mayPass(refusal: HookError): boolean {
  if (refusal.code === "TURN_NOT_ADMITTED") return true;
  return (
    refusal.code === "SESSION_CONFLICT" && (refusal.cause as TurnNotAdmitted | undefined)?.retryable === true
  );
}

/**
 * `admitted`: the host runs it (even when the service stops meanwhile: the caller marks it handed, so the next start
 * does not run it again). `stopping`: the service stops (or stopped) before the host took it, and the turn stays
 * un-handed in the journal for the next start, which asks again with the same run id. `refused`: the summary's words.
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
 * a reload), no answer in time and a session conflict the host calls passing (OpenClaw's sessions are "still
 * initializing" or "changed while starting work" right after its restart, when the journal's waiting turns are asked
 * for) are asked again, after the host's `retryAfterSeconds` when it gave one, until the turn's `timeoutSeconds` have
 * passed since the first ask. A refusal that stands (an archived session) ends it at once.
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
      return { kind: "admitted" };
    } catch (error) {
      if (!open()) return { kind: "stopping" };
      const refusal = toHookError(error);
      const cause = refusal.cause instanceof Error ? `: ${refusal.cause.message}` : "";
      if (!mayPass(refusal)) {
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

/** The host's own figure (`retryAfterSeconds` on an `unavailable` refusal) within 1–60 s, else a second. */
function retryMs(refusal: HookError): number {
  const seconds = (refusal.cause as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (typeof seconds !== "number" || !(seconds > 0)) return RETRY_MS;
  return Math.min(MAX_RETRY_MS, Math.max(MIN_RETRY_MS, seconds * 1000));
}

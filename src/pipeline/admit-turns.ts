/** @module The host's admission of a request's agent turns, before the journal accepts it: refused or late is not accepted. */
import type { ActionPlan } from "../actions/plan-action.js";
import { HookError, isHookError } from "../errors.js";
import type { AgentTurn } from "../events.js";
import type { TurnAdmissionRefusal } from "../host/contract.js";

/** How long the host may take to admit a request's turns before the sender is told to retry. */
export const TURN_ADMISSION_TIMEOUT_MS = 15_000;
/** Seconds a sender waits before retrying when the host gave no figure: a gateway's reload takes about that. */
const RETRY_AFTER_SECONDS = 10;

export type AdmitAgentTurn = (turn: AgentTurn) => Promise<void>;

/**
 * Asks the host to admit every agent turn the plans hold, together, within `timeoutMs`. Throws the refusal the
 * sender gets: 409 for a session conflict, 502 for a refusal, 503 with `Retry-After` when the host is unavailable or
 * did not answer in time. A turn the host admits after the bound still runs: the sender's retry is a second request.
 */
export async function admitTurns(
  admit: AdmitAgentTurn,
  plans: readonly ActionPlan[],
  timeoutMs: number,
): Promise<void> {
  const turns: AgentTurn[] = [];
  for (const plan of plans) {
    for (const planned of plan.events)
      if (planned.event === "session:agent-turn") turns.push(planned.payload);
  }
  await admitAgentTurns(admit, turns, timeoutMs);
}

/** The same for a list of turns: those of a request that start at once, or one leaving its mapping's queue. */
export async function admitAgentTurns(
  admit: AdmitAgentTurn,
  turns: readonly AgentTurn[],
  timeoutMs: number,
): Promise<void> {
  if (turns.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new HookError(
            "TURN_NOT_ADMITTED",
            `The gateway did not admit the agent turn within ${timeoutMs / 1000} s; retry later.`,
            {
              headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
            },
          ),
        ),
      timeoutMs,
    );
    // The bound never keeps a stopping process alive.
    timer.unref();
  });
  try {
    await Promise.race([Promise.all(turns.map(async (turn) => admit(turn))), late]);
  } catch (error) {
    throw refusalOf(error);
  } finally {
    clearTimeout(timer);
  }
}

function refusalOf(error: unknown): HookError {
  if (isHookError(error)) return error;
  const refusal = (error as { admission?: TurnAdmissionRefusal } | undefined)?.admission;
  const reason = error instanceof Error ? error.message : String(error);
  if (refusal === "conflict") {
    return new HookError("SESSION_CONFLICT", `The agent turn's session is not free for it: ${reason}`, {
      cause: error,
    });
  }
  if (refusal === "unavailable") {
    const seconds = (error as { retryAfterSeconds?: number }).retryAfterSeconds;
    return new HookError("TURN_NOT_ADMITTED", `The gateway is not admitting agent turns now: ${reason}`, {
      headers: {
        "Retry-After": String(
          seconds !== undefined && seconds > 0 ? Math.ceil(seconds) : RETRY_AFTER_SECONDS,
        ),
      },
      cause: error,
    });
  }
  // The gateway's own words stay in its log (the cause is logged with the 502): they can name its rights and config.
  return new HookError("TURN_REFUSED", "The gateway refused the agent turn; its log says why.", {
    cause: error,
  });
}

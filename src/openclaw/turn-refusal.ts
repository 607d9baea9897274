/** @module What OpenClaw's refusal of a subagent run means for the sender: a session conflict, a refusal, or "not now". */
import type { TurnAdmissionRefusal, TurnNotAdmitted } from "../index.js";

/** What OpenClaw's gateway errors carry (GatewayProtocolRequestError in its package); plain errors carry none. */
interface GatewayError {
  name?: string;
  message?: string;
  code?: string;
  retryable?: boolean;
  retryAfterMs?: number;
}

/**
 * OpenClaw 2026.9.6 names a session it will not start work in at the start of its message, whatever the reason:
 * `Session "agent:main:hook:x" is archived`, `… changed while starting work. Retry.`, `… was deleted …`,
 * `… is still initializing …`, `… ended during restart recovery …`, `… workspace is not ready …`.
 */
const SESSION_STATE = /^Session "[^"]*" /;
/** Of those, the states that pass on their own (a restart's recovery, a start under way); archived or deleted do not. */
const PASSING_SESSION_STATE =
  /changed while starting work|still initializing|ended during restart recovery|workspace is not ready/i;
/**
 * A gateway closing admission for a restart or reload (`GatewayDrainingError`: "Gateway is draining; new tasks are not
 * accepted"), or between two registrations (its in-process dispatch has no current gateway binding).
 */
const NOT_NOW = /draining|requires a (current )?gateway (request scope|instance binding)/i;

export function classifyRefusal(error: unknown): TurnAdmissionRefusal {
  const { name, message = "", code, retryable } = (error ?? {}) as GatewayError;
  if (SESSION_STATE.test(message)) return "conflict";
  if (name === "GatewayDrainingError" || NOT_NOW.test(message)) return "unavailable";
  // OpenClaw's own code for "temporarily unavailable" (its agent method answers it for a failed admission too).
  if (code === "UNAVAILABLE" || retryable === true) return "unavailable";
  return "refused";
}

/** The error the host contract's `admitAgentTurn` rejects with, from whatever OpenClaw threw. */
export function turnNotAdmitted(error: unknown): TurnNotAdmitted {
  const { message, retryAfterMs } = (error ?? {}) as GatewayError;
  const refused = new Error(message || String(error), { cause: error }) as TurnNotAdmitted;
  refused.admission = classifyRefusal(error);
  if (typeof retryAfterMs === "number" && retryAfterMs > 0) refused.retryAfterSeconds = retryAfterMs / 1000;
  if (refused.admission === "conflict" && PASSING_SESSION_STATE.test(refused.message))
    refused.retryable = true;
  return refused;
}

/** A refusal of the plugin's own, with the same shape. */
export function notAdmitted(admission: TurnAdmissionRefusal, message: string): TurnNotAdmitted {
  const refused = new Error(message) as TurnNotAdmitted;
  refused.admission = admission;
  return refused;
}

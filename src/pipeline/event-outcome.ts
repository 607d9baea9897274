/** @module A wake's answer says what became of its system events (`eventOutcome`), as the host told it while they were emitted. */
import type { ActionPlan } from "../actions/plan-action.js";
import type { Outcomes } from "../journal/journal.js";
import type { PipelineResponse } from "./request.js";
import type { Resolution } from "./resolve.js";
import { type ExtraHeaders, jsonResponse } from "./respond.js";

export type EventOutcome = "queued" | "coalesced" | "duplicate";

/**
 * Whether the request's events go out before its answer: a JSON answer of a request that queues system events (a
 * wake, or wakes beside turns from one mapping) says what became of them, which the host tells only while they are
 * emitted. A fixed answer (`response`) or a caller waiting for its turn has no room for it.
 */
export function answersWithOutcome(plans: readonly ActionPlan[], fixed: boolean): boolean {
  if (fixed) return false;
  for (const plan of plans) if (plan.response.kind === "wake") return true;
  return false;
}

/**
 * One word for the request's system events, as OpenClaw's own hooks answer a fan-out: `queued` if any was queued,
 * else `coalesced` if any joined events already waiting, else `duplicate` (the host already held every one).
 * Undefined when the host told nothing (a host that does not report outcomes): the answer then leaves it out.
 * Only the request's own wakes count: a turn that ended within the emit told its summary's outcome too.
 */
export function eventOutcomeOf(plans: readonly ActionPlan[], told: Outcomes): EventOutcome | undefined {
  let found: EventOutcome | undefined;
  for (const plan of plans) {
    if (plan.response.kind !== "wake") continue;
    const outcome = told[plan.response.eventId];
    if (outcome === "queued") return "queued";
    if (outcome === "coalesced") found = "coalesced";
    else if (outcome === "duplicate") found ??= "duplicate";
  }
  return found;
}

/** The admitted answer plus `eventOutcome`, when the host told one (else the admitted answer as it is). */
export function withEventOutcome(
  admitted: PipelineResponse,
  resolution: Resolution,
  told: Outcomes,
  requestId: string,
  extra: ExtraHeaders | undefined,
): PipelineResponse {
  const outcome = eventOutcomeOf(resolution.plans, told);
  if (outcome === undefined || resolution.body === undefined) return admitted;
  resolution.body.eventOutcome = outcome;
  return jsonResponse(resolution.status, resolution.body, requestId, extra);
}

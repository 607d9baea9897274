/** @module The emit stage: a resolution's planned events onto the host bus, and the `hooks:request` event every request causes. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { RunCompletionTracker, RunListeners } from "../actions/run-completion.js";
import type { HookBus, SystemEventOutcome } from "../events.js";
import type { HostLogger } from "../host/contract.js";

/**
 * Runs are tracked before their turn is emitted: a session subsystem may answer synchronously. What the host tells
 * of the system events while they are emitted (`session:system-event-outcome`) goes into `outcomes` (event id →
 * outcome): hosts tell it from their listener, so it arrives within the emit.
 */
export function emitPlans(
  plans: readonly ActionPlan[],
  bus: HookBus,
  tracker: RunCompletionTracker,
  outcomes?: Record<string, string>,
  listen?: (run: PendingRun) => RunListeners,
): void {
  collectOutcomes(bus, outcomes, () => {
    for (const plan of plans) {
      if (plan.run) {
        tracker.track(plan.run, listen?.(plan.run));
      }
      for (const planned of plan.events) bus.emit(planned.event, planned.payload as never);
    }
  });
}

/**
 * Where each bus's one standing `session:system-event-outcome` listener writes: the outcomes of the emit under way.
 * Listening once per bus, not once per emit: adding and removing a listener for every wake cost more than the rest
 * of the hand-off (bench/PROFILE.md, "Outcomes").
 */
const collecting = new WeakMap<HookBus, { outcomes: Record<string, string> | undefined }>();

function collectorOf(bus: HookBus): { outcomes: Record<string, string> | undefined } {
  let collector = collecting.get(bus);
  if (collector === undefined) {
    const made: { outcomes: Record<string, string> | undefined } = { outcomes: undefined };
    bus.on("session:system-event-outcome", (outcome: SystemEventOutcome) => {
      if (made.outcomes !== undefined) made.outcomes[outcome.eventId] = outcome.outcome;
    });
    collecting.set(bus, made);
    collector = made;
  }
  return collector;
}

/** Runs `emit`, putting what the host tells of system events meanwhile into `outcomes` (when given). */
export function collectOutcomes(
  bus: HookBus,
  outcomes: Record<string, string> | undefined,
  emit: () => void,
): void {
  if (outcomes === undefined) {
    emit();
    return;
  }
  const collector = collectorOf(bus);
  // An emit inside an emit (a listener that emits) keeps the outer request's outcomes apart from its own.
  const outer = collector.outcomes;
  collector.outcomes = outcomes;
  try {
    emit();
  } finally {
    collector.outcomes = outer;
  }
}

export interface RequestSummary {
  method: string;
  hook: string;
  requestId: string;
  mappingId: string | undefined;
  status: number;
  durationMs: number;
}

/** The one event every request causes (no payload, no headers); a failing listener never fails the request. */
export function emitRequestEvent(summary: RequestSummary, bus: HookBus, logger: HostLogger): void {
  const { method, hook, requestId, mappingId, status, durationMs } = summary;
  try {
    bus.emit(
      "hooks:request",
      mappingId === undefined
        ? { source: { hook, requestId }, method, hook, status, durationMs }
        : { source: { hook, mappingId, requestId }, method, hook, status, mappingId, durationMs },
    );
  } catch (error) {
    logger.error(`a hooks:request listener failed: ${(error as Error)?.message ?? String(error)}`, {
      requestId,
    });
  }
}

/** @module The emit stage: a resolution's planned events onto the host bus, and the `hooks:request` event every request causes. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { RunCompletionTracker, RunDelivered, RunPublished } from "../actions/run-completion.js";
import type { HookBus, SystemEventOutcome } from "../events.js";
import type { HostLogger } from "../host/contract.js";

/** Who hears of a run's end and of its delivery's result. */
export interface RunListeners {
  published: RunPublished;
  delivered?: RunDelivered;
}

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
        const listeners = listen?.(plan.run);
        tracker.track(plan.run, listeners?.published, listeners?.delivered);
      }
      for (const planned of plan.events) bus.emit(planned.event, planned.payload as never);
    }
  });
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
  const told = (outcome: SystemEventOutcome) => {
    outcomes[outcome.eventId] = outcome.outcome;
  };
  bus.on("session:system-event-outcome", told);
  try {
    emit();
  } finally {
    bus.off("session:system-event-outcome", told);
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

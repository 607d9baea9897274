/** @module The emit stage: a resolution's planned events onto the host bus, and the `hooks:request` event every request causes. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { RunCompletionTracker, RunPublished } from "../actions/run-completion.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";

/** Runs are tracked before their turn is emitted: a session subsystem may answer synchronously. */
export function emitPlans(
  plans: readonly ActionPlan[],
  bus: HookBus,
  tracker: RunCompletionTracker,
  onPublished?: (run: PendingRun) => RunPublished,
): void {
  for (const plan of plans) {
    if (plan.run) tracker.track(plan.run, onPublished?.(plan.run));
    for (const planned of plan.events) bus.emit(planned.event, planned.payload as never);
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

/** @module The turn-slot stage: an agent turn takes its mapping's slot (or its place in the queue), and the host admits the turns that start now. */
import { type AdmitAgentTurn, admitTurns } from "../admit-turns.js";
import { need, type Stage, StageFailure } from "../stage.js";
import type { TurnGate } from "../turn-gate.js";

export interface TurnSlotDeps {
  /** Where agent turns past their mapping's `maxConcurrentTurns` wait. */
  gate: TurnGate;
  /** The host's admission of agent turns; absent: admitted. */
  admitAgentTurn?: AdmitAgentTurn | undefined;
  turnAdmissionTimeoutMs: number;
}

/**
 * Slots are held from here to the hand-off: a turn that will wait is neither admitted now nor started later twice.
 * The host is asked first: a turn it will not run is refused here, with nothing journaled, so the sender's retry is
 * safe. A turn that waits for its slot is admitted when it leaves the queue: admitting it is starting it.
 */
export function createTurnSlotStage(deps: TurnSlotDeps): Stage {
  return function turnSlots(ctx) {
    const resolution = need(ctx.resolution, "the resolution");
    const { plans } = resolution;
    // A wake holds no slot: answered at once, without a promise.
    if (!plans.some((plan) => plan.run !== undefined)) return ctx;
    const pass = deps.gate.claim(plans);
    // A turn that waits says so in its answer: a resolution of its own, the one before left as it was.
    const queued =
      pass.queued && resolution.body !== undefined
        ? { ...resolution, body: { ...resolution.body, queued: true } }
        : resolution;
    const holding = { ...ctx, pass, resolution: queued };
    if (deps.admitAgentTurn === undefined) return holding;
    const startNow = plans.filter((plan) => plan.run !== undefined && pass.holds(plan.run.runId));
    return admitTurns(deps.admitAgentTurn, startNow, deps.turnAdmissionTimeoutMs).then(
      () => holding,
      (error: unknown) => {
        throw new StageFailure(error, holding);
      },
    );
  };
}

/** @module The hand-off: an admitted request's events leave by one door once its record is durable, its turns through their mapping's cap (recover.ts finishes what a crash left, the same way). */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { RunCompletionTracker, RunDelivered, RunPublished } from "../actions/run-completion.js";
import { errorMessage } from "../errors.js";
import type { AgentTurn, PlannedEvent } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal, Outcomes, RunOutcome } from "../journal/journal.js";
import type { AdmitAgentTurn } from "./admit-turns.js";
import { admitWaitingTurn } from "./admit-waiting-turn.js";
import type { EventDoor } from "./event-door.js";
import type { Start, TurnGate } from "./turn-gate.js";
import type { TurnPass } from "./turn-pass.js";

export interface HandOffDeps {
  journal: Journal;
  /** The one door events leave by. */
  door: EventDoor;
  tracker: RunCompletionTracker;
  logger: HostLogger;
  /** Where a turn waits for a slot when its mapping's `maxConcurrentTurns` are running. */
  gate: TurnGate;
  /** The host's admission, asked when a turn leaves that held no slot at its request (it waited, or a crash left it). */
  admitAgentTurn?: AdmitAgentTurn | undefined;
  turnAdmissionTimeoutMs: number;
}

/** Calls `finished` with every run's outcome once the last of `count` runs has published its summary. */
export function whenAllPublished(
  count: number,
  finished: (outcomes: RunOutcome[]) => void,
): (run: Pick<PendingRun, "runId">) => RunPublished {
  const outcomes: RunOutcome[] = [];
  return (run) => (status, reply) => {
    outcomes.push(reply === undefined ? { runId: run.runId, status } : { runId: run.runId, status, reply });
    if (outcomes.length === count) finished(outcomes);
  };
}

/** A delivery's result, listed on its record once the host tells it (after the record's `done` line, often). */
function deliveryOutcome(deps: HandOffDeps, requestId: string, runId: string): RunDelivered {
  return (result) => {
    try {
      deps.journal.outcome?.(requestId, { [`${runId}:delivery`]: result });
    } catch {
      // Listed on a best-effort basis, like a refusal: the delivery happened either way.
    }
  };
}

/**
 * A turn is written down as handed over before it leaves: after a crash it is reported interrupted rather than run
 * twice, while one still waiting for its slot is not handed, and a restart runs it. A record with one turn gets the
 * plain marker; the turns of a fan-out are named as each leaves. A marker that cannot be written is logged; the turn
 * still goes.
 */
function markHanded(deps: HandOffDeps, requestId: string, runIds?: readonly string[]): void {
  try {
    deps.journal.handed(requestId, runIds);
  } catch (error) {
    deps.logger.error(
      `journal: the hand-over of an agent turn could not be recorded: ${errorMessage(error)}`,
      {
        requestId,
      },
    );
  }
}

/** What marks each of a record's `turns` handed as it leaves: the whole record when it has one. */
export function handedMarker(deps: HandOffDeps, requestId: string, turns: number): (run: PendingRun) => void {
  return turns === 1 ? () => markHanded(deps, requestId) : (run) => markHanded(deps, requestId, [run.runId]);
}

interface TurnStart {
  run: PendingRun;
  events: readonly PlannedEvent[];
  /** The host admitted it with its request (it held a slot then): it is not asked again. */
  admitted: boolean;
  handed: (run: PendingRun) => void;
  published: RunPublished;
  delivered?: RunDelivered | undefined;
}

/**
 * What the gate runs once the turn holds a slot: marked handed, tracked, then emitted; the slot is the gate's again
 * when the turn is over (any outcome). A turn the host did not admit with its request is admitted now, and is handed
 * only once admitted: a refusal that stands is its outcome (its sender had its 202 long ago), a "not now" is asked
 * again, and a stop leaves it un-handed for the next start.
 */
export function startTurn(deps: HandOffDeps, turn: TurnStart): Start {
  return (slot) => {
    const listeners = { published: turn.published, delivered: turn.delivered, ended: slot.release };
    const begin = () => {
      turn.handed(turn.run);
      deps.tracker.track(turn.run, listeners);
      deps.door.deliver(turn.events);
    };
    const admit = deps.admitAgentTurn;
    if (turn.admitted || admit === undefined) {
      begin();
      return;
    }
    const waiting = { run: turn.run, turn: turnOf(turn.events), open: slot.open };
    void admitWaitingTurn({ admit, timeoutMs: deps.turnAdmissionTimeoutMs, logger: deps.logger }, waiting)
      .then((admission) => {
        if (admission.kind === "refused") deps.tracker.notStarted(turn.run, admission.error, listeners);
        else if (admission.kind === "admitted" && slot.open()) begin();
        else {
          // Stopping: a turn the host took runs there, and is handed so that the next start does not run it twice.
          if (admission.kind === "admitted") turn.handed(turn.run);
          slot.release();
        }
      })
      .catch((error: unknown) => {
        deps.logger.error(`starting a waiting agent turn failed: ${errorMessage(error)}`, {
          runId: turn.run.runId,
        });
      });
  };
}

function turnOf(events: readonly PlannedEvent[]): AgentTurn | undefined {
  for (const planned of events) if (isTurn(planned)) return planned.payload;
  return undefined;
}

/** Hands an admitted request's events to the host; returns what the host told of its system events meanwhile. */
export type HandOff = (requestId: string, plans: readonly ActionPlan[], pass?: TurnPass) => Outcomes;

/**
 * Emits an admitted request's events; the record is done once they are out and every run's summary is published.
 * Its `done` line carries what the host told of its system events meanwhile (queued, coalesced, duplicate), and so
 * does what this returns (a wake's answer says it). Its turns go through the gate: at once when `pass` holds their
 * slots (or one is free), else when a turn of their mapping ends.
 */
export function createHandOff(deps: HandOffDeps): HandOff {
  return (requestId, plans, pass) => {
    const runs = plans.filter((plan) => plan.run !== undefined).length;
    if (runs === 0) {
      const told = deps.door.deliver(eventsOf(plans));
      deps.journal.done(requestId, undefined, undefined, nonEmpty(told));
      return told;
    }
    let told: Outcomes | undefined;
    const published = whenAllPublished(runs, (outcomes) =>
      deps.journal.done(requestId, outcomes, undefined, told && nonEmpty(told)),
    );
    // A wake beside the turns does not wait for their slots.
    told = deps.door.deliver(eventsOf(plans.filter((plan) => plan.run === undefined)));
    const handed = handedMarker(deps, requestId, runs);
    try {
      for (const plan of plans) {
        const { run } = plan;
        if (run === undefined) continue;
        const admitted = pass?.take(run.runId) ?? false;
        const start = startTurn(deps, {
          run,
          events: plan.events,
          admitted,
          handed,
          published: published(run),
          delivered: deliveryOutcome(deps, requestId, run.runId),
        });
        deps.gate.enter(run, start, admitted);
      }
    } finally {
      // A listener that threw left the rest unstarted (the record stays unfinished): their slots are free again.
      pass?.cancel();
    }
    return told;
  };
}

function eventsOf(plans: readonly ActionPlan[]): PlannedEvent[] {
  return plans.length === 1 ? (plans[0]!.events as PlannedEvent[]) : plans.flatMap((plan) => plan.events);
}

export function nonEmpty(outcomes: Outcomes): Outcomes | undefined {
  for (const _ in outcomes) return outcomes;
  return undefined;
}

export function isTurn(
  planned: PlannedEvent,
): planned is Extract<PlannedEvent, { event: "session:agent-turn" }> {
  return planned.event === "session:agent-turn";
}

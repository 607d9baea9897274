/** @module The hand-off: an admitted request's events go to the host once its record is durable, and what a crash left is finished at start. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { RunCompletionTracker, RunDelivered, RunPublished } from "../actions/run-completion.js";
import { errorMessage } from "../errors.js";
import type { HookBus, PlannedEvent } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal, JournalBacklog, Outcomes, RunOutcome, UnfinishedRecord } from "../journal/journal.js";
import { collectOutcomes, emitPlans } from "./emit.js";

export interface HandOffDeps {
  journal: Journal;
  bus: HookBus;
  tracker: RunCompletionTracker;
  logger: HostLogger;
}

/** Calls `finished` with every run's outcome once the last of `count` runs has published its summary. */
function whenAllPublished(
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
 * The record's turns are written down as handed over before they are: after a crash a turn is reported
 * interrupted rather than run twice. A marker that cannot be written is logged; the turn still goes.
 */
function markHanded(deps: HandOffDeps, requestId: string): void {
  try {
    deps.journal.handed(requestId);
  } catch (error) {
    deps.logger.error(
      `journal: the hand-over of an agent turn could not be recorded: ${errorMessage(error)}`,
      {
        requestId,
      },
    );
  }
}

/**
 * Emits an admitted request's events; the record is done once they are out and every run's summary is published.
 * Its `done` line carries what the host told of its system events meanwhile (queued, coalesced, duplicate), and so
 * does what this returns (a wake's answer says it).
 */
export function handOff(deps: HandOffDeps, requestId: string, plans: readonly ActionPlan[]): Outcomes {
  const runs = plans.filter((plan) => plan.run !== undefined).length;
  const told = toldOutcomes();
  if (runs === 0) {
    emitPlans(plans, deps.bus, deps.tracker, told);
    deps.journal.done(requestId, undefined, undefined, nonEmpty(told));
    return told;
  }
  markHanded(deps, requestId);
  const published = whenAllPublished(runs, (outcomes) =>
    deps.journal.done(requestId, outcomes, undefined, nonEmpty(told)),
  );
  emitPlans(plans, deps.bus, deps.tracker, told, (run) => ({
    published: published(run),
    delivered: deliveryOutcome(deps, requestId, run.runId),
  }));
  return told;
}

/**
 * Where the host's outcomes of a request's system events go, keyed by event id. Without a prototype the object is a
 * hash table from the start: on a plain `{}` every new event id (a UUID) made a hidden class of its own, which cost
 * more per wake than the rest of the hand-off (bench/PROFILE.md, "Outcomes").
 */
function toldOutcomes(): Outcomes {
  return Object.create(null) as Outcomes;
}

function nonEmpty(outcomes: Outcomes): Outcomes | undefined {
  for (const _ in outcomes) return outcomes;
  return undefined;
}

/** What the recovery at start did, for its log line. */
export interface RecoveryReport {
  records: number;
  events: number;
  turnsRun: number;
  turnsInterrupted: number;
  failed: number;
}

/**
 * Finishes every record a previous run admitted and did not finish, oldest first, with the original ids:
 * events go out again (a host drops the ones it already has by id); a turn that was never handed over runs
 * now; a turn that was gets its summary `<name> (error): interrupted by a restart` and is not run again.
 */
export async function finishUnfinished(deps: HandOffDeps, backlog: JournalBacklog): Promise<RecoveryReport> {
  const report: RecoveryReport = { records: 0, events: 0, turnsRun: 0, turnsInterrupted: 0, failed: 0 };
  for (const unfinished of backlog.unfinished) {
    try {
      await finishOne(deps, unfinished, report);
      report.records++;
    } catch (error) {
      report.failed++;
      deps.logger.error(
        `journal: a request left by the previous run could not be finished: ${errorMessage(error)}`,
        {
          requestId: unfinished.record.id,
        },
      );
    }
  }
  return report;
}

async function finishOne(
  deps: HandOffDeps,
  { record, handed }: UnfinishedRecord,
  report: RecoveryReport,
): Promise<void> {
  const runs = new Map((record.runs ?? []).map((run) => [run.runId, run]));
  const turns = record.events.filter(isTurn);
  const outcomes: RunOutcome[] = [];
  const toRun: PendingRun[] = [];
  for (const turn of turns) {
    const run = runs.get(turn.payload.runId);
    if (run === undefined) throw new Error(`the record has no run for turn ${turn.payload.runId}`);
    if (handed) outcomes.push({ runId: run.runId, status: "interrupted" });
    else toRun.push(run);
  }
  if (toRun.length > 0) markHanded(deps, record.id);
  // Emitted again after a crash: a host that kept them says `duplicate`.
  const told = toldOutcomes();
  const published = whenAllPublished(toRun.length, (done) =>
    deps.journal.done(record.id, [...outcomes, ...done], true, nonEmpty(told)),
  );
  collectOutcomes(deps.bus, told, () => emitRecorded(deps, record, runs, handed, published, report));
  if (toRun.length === 0) deps.journal.done(record.id, outcomes, true, nonEmpty(told));
}

function emitRecorded(
  deps: HandOffDeps,
  record: UnfinishedRecord["record"],
  runs: ReadonlyMap<string, PendingRun>,
  handed: boolean,
  published: (run: Pick<PendingRun, "runId">) => RunPublished,
  report: RecoveryReport,
): void {
  for (const planned of record.events) {
    if (!isTurn(planned)) {
      deps.bus.emit(planned.event, planned.payload as never);
      report.events++;
      continue;
    }
    const run = runs.get(planned.payload.runId)!;
    if (handed) {
      deps.tracker.interrupted(run);
      report.turnsInterrupted++;
    } else {
      deps.tracker.track(run, published(run));
      deps.bus.emit("session:agent-turn", planned.payload);
      report.turnsRun++;
    }
  }
}

function isTurn(planned: PlannedEvent): planned is Extract<PlannedEvent, { event: "session:agent-turn" }> {
  return planned.event === "session:agent-turn";
}

/** @module At start: open the journal, remember the delivery ids it holds, and finish what the previous run left. */

import type { PendingRun } from "../actions/plan-action.js";
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { PlannedEvent } from "../events.js";
import type { StoredEvent } from "../host/contract.js";
import type { JournalBacklog, Outcomes, RunOutcome, UnfinishedRecord } from "../journal/journal.js";
import { type HandOffDeps, handedMarker, isTurn, nonEmpty, startTurn, whenAllPublished } from "./hand-off.js";
import { type DuplicateDeps, rememberDeliveries } from "./stages/dedupe.js";
import { storeAgain } from "./store-again.js";

/** The hand-off's own deps (the turns left unhanded run through its gate, as a new request's do), and the store's. */
export interface RecoveryDeps extends HandOffDeps {
  duplicates: DuplicateDeps;
  clock: Clock;
  /** The host's check that it still holds what the journal says it stored (see the host contract). */
  checkStored?: ((events: readonly StoredEvent[]) => void) | undefined;
  /** How far the host's own state is on disk (see the host contract); undefined for a host that syncs per request. */
  durableThrough?: (() => number | undefined) | undefined;
  /** What holds the host's state, named when a start rebuilds it. */
  stateName?: (() => string | undefined) | undefined;
}

/** Runs before the route takes requests: a retry arriving at once must find its delivery id remembered. */
export async function recoverFromJournal(deps: RecoveryDeps): Promise<void> {
  const { journal, logger } = deps;
  const backlog = await journal.open();
  // Before anything else: a host that lost what it had stored and cannot get it back from the journal must not take
  // more (the error names what to do), and nothing the previous run left is handed to it either.
  await storeAgain(deps, backlog.stored ?? []);
  const remembered = await rememberDeliveries(deps.duplicates, backlog.deliveries, deps.clock.now()).catch(
    (error: unknown) => {
      // A shared store that is down now is not a reason not to start: it holds these ids already unless it lost
      // them too, and until it is back every duplicate check refuses rather than accepts.
      logger.warn(
        `journal: the previous run's delivery ids could not be put in the store yet (${errorMessage(error)}); the Redis store puts them back once it answers`,
      );
      return 0;
    },
  );
  const report = await finishUnfinished(deps, backlog);
  if (report.records > 0 || report.failed > 0) {
    logger.info("journal: finished the requests the previous run had accepted and not finished", {
      requests: report.records,
      events: report.events,
      turnsRun: report.turnsRun,
      turnsInterrupted: report.turnsInterrupted,
      failed: report.failed,
    });
  }
  if (remembered > 0) logger.debug("journal: delivery ids remembered from the previous run", { remembered });
}

/** What the recovery at start did, for its log line. */
interface RecoveryReport {
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
async function finishUnfinished(deps: HandOffDeps, backlog: JournalBacklog): Promise<RecoveryReport> {
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
  { record, handed, handedRuns }: UnfinishedRecord,
  report: RecoveryReport,
): Promise<void> {
  // Handed over (the whole record, or this turn of a fan-out): it may have run, so it is not run again.
  const went = new Set(handedRuns);
  const interrupted = (runId: string) => handed || went.has(runId);
  const runs = new Map((record.runs ?? []).map((run) => [run.runId, run]));
  const turns = record.events.filter(isTurn);
  const outcomes: RunOutcome[] = [];
  const toRun: Array<{ run: PendingRun; planned: PlannedEvent }> = [];
  for (const planned of turns) {
    const run = runs.get(planned.payload.runId);
    if (run === undefined) throw new Error(`the record has no run for turn ${planned.payload.runId}`);
    if (interrupted(run.runId)) outcomes.push({ runId: run.runId, status: "interrupted" });
    else toRun.push({ run, planned });
  }
  // Emitted again after a crash: a host that kept them says `duplicate`.
  let told: Outcomes | undefined;
  const published = whenAllPublished(toRun.length, (done) =>
    deps.journal.done(record.id, [...outcomes, ...done], true, told && nonEmpty(told)),
  );
  told = deps.door.deliver(
    record.events.filter((planned) => !isTurn(planned)),
    () => interruptTurns(deps, record, runs, interrupted),
  );
  report.events += record.events.filter((planned) => !isTurn(planned)).length;
  report.turnsInterrupted += turns.filter((planned) => interrupted(planned.payload.runId)).length;
  if (toRun.length === 0) {
    deps.journal.done(record.id, outcomes, true, nonEmpty(told));
    return;
  }
  // Through the gate like a new request's, in journal order: a backlog of turns does not start all at once.
  const marked = handedMarker(deps, record.id, turns.length);
  for (const { run, planned } of toRun) {
    const start = startTurn(deps, {
      run,
      events: [planned],
      admitted: false,
      handed: marked,
      published: published(run),
    });
    deps.gate.enter(run, start, false);
    report.turnsRun++;
  }
}

/** A turn a restart cut short gets its summary `interrupted`, not a second run. */
function interruptTurns(
  deps: HandOffDeps,
  record: UnfinishedRecord["record"],
  runs: ReadonlyMap<string, PendingRun>,
  interrupted: (runId: string) => boolean,
): void {
  for (const planned of record.events) {
    if (isTurn(planned) && interrupted(planned.payload.runId))
      deps.tracker.interrupted(runs.get(planned.payload.runId)!);
  }
}

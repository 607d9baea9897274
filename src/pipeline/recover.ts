/** @module At start: open the journal, remember the delivery ids it holds, and finish what the previous run left. */
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { StoredEvent } from "../host/contract.js";
import { finishUnfinished, type HandOffDeps } from "./hand-off.js";
import { type DuplicateDeps, rememberDeliveries } from "./stages/dedupe.js";

/** The hand-off's own deps (the turns left unhanded run through its gate, as a new request's do), and the store's. */
export interface RecoveryDeps extends HandOffDeps {
  duplicates: DuplicateDeps;
  clock: Clock;
  /** The host's check that it still holds what the journal says it stored (see the host contract). */
  checkStored?: ((events: readonly StoredEvent[]) => void) | undefined;
}

/** Runs before the route takes requests: a retry arriving at once must find its delivery id remembered. */
export async function recoverFromJournal(deps: RecoveryDeps): Promise<void> {
  const { journal, logger } = deps;
  const backlog = await journal.open();
  // First: a host that lost what it had stored must not take more (the error names what to do), and nothing the
  // previous run left is handed to it either.
  if (backlog.stored !== undefined && backlog.stored.length > 0) deps.checkStored?.(backlog.stored);
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

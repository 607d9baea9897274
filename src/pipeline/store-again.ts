/** @module At start: a host whose state lags the journal (synced now and then, new, or damaged) gets the journal's system events again, by id. */

import type { HostLogger, StoredEvent } from "../host/contract.js";
import type { Journal, StoredAgain } from "../journal/journal.js";
import type { EventDoor } from "./event-door.js";

export interface StoreAgainDeps {
  journal: Journal;
  door: EventDoor;
  logger: HostLogger;
  /** How far the host's state is on disk; 0 for a new one (see the host contract). */
  durableThrough?: (() => number | undefined) | undefined;
  /** What holds the host's state, for the warning. */
  stateName?: (() => string | undefined) | undefined;
  /** Throws when the host lacks some of these events (see the host contract). */
  checkStored?: ((events: readonly StoredEvent[]) => void) | undefined;
}

/** One hand-over: what the journal held since a moment, and how many the host did not have. */
interface HandedAgain extends StoredAgain {
  since: number;
  again: number;
}

/**
 * Before anything else runs. The usual case costs what the last second before a crash finished: the events since the
 * host's last sync. A new state (its file was missing) gets everything the journal holds; so does a state that lacks
 * events its sync had covered (the newest few hundred are asked), which only damage explains. Then the host is asked
 * again, and a state that still lacks them stops the start with the host's error. One warning says what was done.
 */
export async function storeAgain(deps: StoreAgainDeps, newest: readonly StoredEvent[]): Promise<void> {
  const since = deps.durableThrough?.();
  let handed = since === undefined ? undefined : await handOver(deps, since);
  let lacked = false;
  if (
    since !== 0 &&
    newest.length > 0 &&
    deps.checkStored !== undefined &&
    !holds(deps.checkStored, newest)
  ) {
    lacked = true;
    handed = await handOver(deps, 0);
  }
  if (handed !== undefined) tell(deps, handed, lacked);
  // A host that still lacks them: the start fails with its message (what is damaged, what to do).
  if (newest.length > 0 && (lacked || since === 0)) deps.checkStored?.(newest);
}

async function handOver(deps: StoreAgainDeps, since: number): Promise<HandedAgain | undefined> {
  if (deps.journal.storedSince === undefined) return undefined;
  const found = await deps.journal.storedSince(since);
  if (found.events.length === 0) return { ...found, since, again: 0 };
  const outcomes = Object.values(deps.door.deliver(found.events));
  return { ...found, since, again: outcomes.filter((outcome) => outcome !== "duplicate").length };
}

function holds(check: (events: readonly StoredEvent[]) => void, events: readonly StoredEvent[]): boolean {
  try {
    check(events);
    return true;
  } catch {
    return false;
  }
}

function tell(deps: StoreAgainDeps, handed: HandedAgain, lacked: boolean): void {
  const { events, requests, compacted, since, again } = handed;
  if (events.length === 0 && compacted === 0) return;
  const name = deps.stateName?.() ?? "the host's state";
  const what = lacked
    ? `${name} lacked events of requests the journal finished before its last sync (the file or its write-ahead log was damaged, replaced or emptied): rebuilt from the journal`
    : since === 0
      ? `${name} is new, or lost every write since it was (its first sync): rebuilt from the journal`
      : `${name} is on disk up to its last sync (${new Date(since).toISOString()}), the requests finished after it`;
  const lost =
    compacted === 0
      ? ""
      : `; ${compacted} system events of older requests could not be, the journal keeps them only by id (a segment is compacted once all its requests are finished)`;
  const message = `journal: ${what}: ${events.length} system events of ${requests} requests delivered again; ${again} were missing and are stored again${lost}`;
  const fields = { events: events.length, requests, again, compacted };
  if (again > 0 || compacted > 0 || lacked) deps.logger.warn(message, fields);
  else deps.logger.debug(message, fields);
}

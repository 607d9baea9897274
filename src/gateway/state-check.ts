/** @module At start: the state database must still hold what the plugin's journal says it stored, or the gateway does not start on it. */
import path from "node:path";
import type { StoredEvent } from "../index.js";
import { hooksCommand } from "./hooks-command.js";
import type { SessionStore } from "./session-store.js";
import type { StateDb } from "./state-db.js";

const DAY_MS = 86_400_000;
/** Events this close to the retention cutoff may be purged at any moment: they prove nothing either way. */
const CUTOFF_MARGIN_MS = 3_600_000;

export interface StoredCheckOptions {
  retainDays: number;
  now?: () => number;
}

/**
 * Throws when the database lacks events of the newest requests the journal marked done. The journal writes `done`
 * only once this database committed what the request caused, and a start delivers again what finished after the
 * last sync, so a missing one means the file was replaced, emptied, or lost writes it had synced (garbage in its
 * write-ahead log); the plugin then delivers everything the journal holds again and asks once more. Still missing
 * then, serving on it would answer 200 into a state that forgets: the gateway refuses to start and says what to do.
 * Events admitted before the file was created are not asked of it: the file was moved away, the new one rebuilt
 * from what the journal still holds, and the journal names the old file's events until enough new requests finish.
 */
export function checkStateHolds(
  state: StateDb,
  store: SessionStore,
  events: readonly StoredEvent[],
  options: StoredCheckOptions,
): void {
  const cutoff = Math.max(
    (options.now ?? Date.now)() - options.retainDays * DAY_MS + CUTOFF_MARGIN_MS,
    state.createdAt ?? Number.NEGATIVE_INFINITY,
  );
  const checked = events.filter((event) => event.at >= cutoff);
  const missing = checked.filter((event) => !store.holds(event.eventId));
  if (missing.length === 0) return;
  const newest = new Date(Math.max(...missing.map((event) => event.at))).toISOString();
  const name = path.basename(state.file);
  throw new Error(
    `${state.file} lacks ${missing.length} of the ${checked.length} newest events the journal says it stored ` +
      `(requests accepted up to ${newest}), also once every event the journal holds in full was delivered again: ` +
      `it was replaced, emptied or damaged (${name}-wal too), and the journal keeps only the ids of those ` +
      `requests. Not starting on it: requests would be acknowledged into a state that forgets. Restore it from a ` +
      `backup, or move ${name} (with its -wal and -shm files) out of ${path.dirname(state.file)} to accept the ` +
      `loss: the next start rebuilds it from what the journal holds; \`${hooksCommand()} journal list\` shows ` +
      `what was accepted.`,
  );
}

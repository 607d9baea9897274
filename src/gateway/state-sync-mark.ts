/**
 * @module How far the state database is on disk: its write-ahead log synced about once a second when something was
 * committed, the moment that sync covers kept in the file itself, so a start knows what to take from the journal.
 */
import type { StateDb } from "./state-db.js";
import { SETTING } from "./state-schema.js";

/** How often the log is synced when there were commits: the most a power cut can make the journal store again. */
const SYNC_EVERY_MS = 1_000;

export interface SyncMark {
  /**
   * As read at start: every commit before it is on disk; what the journal finished after it is delivered again.
   * 0 for a new file (everything is delivered again); undefined for a file written by a version that synced every
   * commit, which has no mark.
   */
  readonly durableThrough: number | undefined;
  /** Writes the mark for now (the database's close then checkpoints it to disk) and stops the timer. */
  stop(): void;
}

/**
 * Requests are journaled and synced by the plugin; this database's commits are not synced one by one (a second
 * sync per batch of requests), but now and then. The mark is committed in the transaction before the sync: once it
 * is on disk, so is everything committed before it (the log is replayed in order, up to its first torn frame).
 */
export function startSyncMark(state: StateDb, everyMs = SYNC_EVERY_MS): SyncMark {
  const read = state.db.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck();
  const write = state.db.prepare<[string, string]>(
    "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
  );
  const kept = Number(read.get(SETTING.syncedThrough));
  // A new file holds nothing yet: everything the journal holds is stored again, and until a sync covers that, its
  // mark says 0 (a crash meanwhile rebuilds it again).
  const durableThrough = state.created ? 0 : Number.isFinite(kept) && kept >= 0 ? kept : undefined;
  if (state.created || durableThrough === undefined) {
    // From now on the file has a mark, in the database file itself (checkpointed, not only in the log): a log lost
    // before the next checkpoint then leaves a mark older than what it held, and that is stored again.
    state.transact(() => write.run(SETTING.syncedThrough, state.created ? "0" : String(Date.now())));
    try {
      state.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      state.reportError(error);
    }
  }
  let seen = state.commits;
  let syncing = false;
  const mark = () => {
    if (syncing || state.commits === seen) return;
    syncing = true;
    const at = String(Date.now());
    state.write(() => write.run(SETTING.syncedThrough, at));
    // The mark's own commit is not news; anything committed besides it is, at the next tick.
    seen = state.commits + 1;
    state
      .committed()
      .catch((error: unknown) => state.reportError(error))
      .finally(() => {
        syncing = false;
      });
  };
  const timer = setInterval(mark, everyMs);
  timer.unref();
  return {
    durableThrough,
    stop() {
      clearInterval(timer);
      state.transact(() => write.run(SETTING.syncedThrough, String(Date.now())));
    },
  };
}

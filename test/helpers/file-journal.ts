/** @module A FileJournal as the plugin opens one by default (batched syncs, 72 h, the real clock, no log), for tests that need one beside a gateway. */
import { systemClock } from "../../src/clock.js";
import { FileJournal, type FileJournalSettings } from "../../src/journal/file-journal.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

export function testJournal(dir: string, settings: Partial<FileJournalSettings> = {}): FileJournal {
  return new FileJournal({
    dir,
    fsync: "batch",
    retainHours: 72,
    deliveryWindowMs: 86_400_000,
    maxDeliveries: 100,
    clock: systemClock,
    logger: QUIET,
    ...settings,
  });
}

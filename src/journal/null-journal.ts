/** @module The journal port when nothing is recorded (journal off, a host without a state directory, a replay). */
import type { Journal, JournalObserver } from "./journal.js";

export const NULL_JOURNAL: Journal = {
  open: async () => ({ unfinished: [], deliveries: [] }),
  admit: async () => undefined,
  handed: () => undefined,
  done: () => undefined,
  // Nothing is listed, and nothing left out by a limit: a caller keeping its own copy keeps this one.
  answered: () => true,
  responded: () => undefined,
  close: async () => undefined,
};

/**
 * A journal that records nothing but still tells its observers what passed through it, so the inspector of a host
 * without a journal lists accepted requests as they happen. One per plugin instance: observers are its own.
 */
export function createNullJournal(): Journal {
  const observers: JournalObserver[] = [];
  return {
    ...NULL_JOURNAL,
    admit: async (record) => {
      for (const observer of observers) observer.admitted?.(record);
    },
    done: (id, runs, _recovered, outcomes) => {
      for (const observer of observers) observer.done?.(id, runs, outcomes);
    },
    answered: (record) => {
      for (const observer of observers) observer.answered?.(record, true);
      return true;
    },
    outcome: (id, outcomes) => {
      for (const observer of observers) observer.outcome?.(id, outcomes);
    },
    responded: (id, status) => {
      for (const observer of observers) observer.responded?.(id, status);
    },
    observe(observer) {
      observers.push(observer);
      return () => {
        const at = observers.indexOf(observer);
        if (at !== -1) observers.splice(at, 1);
      };
    },
  };
}

/** @module The journal port when nothing is recorded (journal off, a host without a state directory, a replay). */
import type { Journal } from "./journal.js";

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

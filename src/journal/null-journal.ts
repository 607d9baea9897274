/** @module The journal port when nothing is recorded (journal off, a host without a state directory, a replay). */
import type { Journal } from "./journal.js";

export const NULL_JOURNAL: Journal = {
  open: async () => ({ unfinished: [], deliveries: [] }),
  admit: async () => undefined,
  handed: () => undefined,
  done: () => undefined,
  answered: () => undefined,
  responded: () => undefined,
  close: async () => undefined,
};

/** @module The Journal port: where an accepted request is recorded before its answer leaves (a no-op for now). */
import type { PlannedEvent } from "../events.js";

/** What the gateway accepted: enough to say later what a hook did. */
export interface JournalEntry {
  requestId: string;
  hook: string;
  mappingId?: string | undefined;
  status: number;
  events: readonly PlannedEvent[];
}

export interface Journal {
  /** Resolves once the entry is recorded; a rejection means "not accepted" (the request gets 503). */
  admit(entry: JournalEntry): Promise<void>;
  close(): Promise<void>;
}

/** Records nothing: the default until a durable journal exists. */
export const noopJournal: Journal = {
  admit: async () => undefined,
  close: async () => undefined,
};

/** @module The Journal port: where an accepted request is recorded before its answer leaves, and marked as its effects happen. */
import type { PlannedEvent } from "../events.js";
import type { StoredEvent } from "../host/contract.js";
import type { AdmittedLine, AnsweredLine, JournalRun, Outcomes, RunOutcome } from "./records.js";

/** An accepted request, as the pipeline hands it over (the journal stamps the line kind). */
export type AdmittedRecord = Omit<AdmittedLine, "t" | "handed" | "handedRuns">;
/** A request answered without admission (a refusal, a duplicate). */
export type AnsweredRecord = Omit<AnsweredLine, "t">;

/** How a listing is limited, so that a flood of refusals or a replayed delivery cannot fill the disk. */
export interface AnsweredOptions {
  /**
   * A refusal before any credential was accepted: listed at most `refusedPerMinute` times a minute per client
   * address, and within `refusedTotalPerMinute` lines and `refusedBytesPerMinute` bytes a minute for all together.
   */
  perClient?: boolean | undefined;
  /**
   * An answer a sender gets again each time it repeats the request, as fast as it likes, with its credentials
   * accepted: a duplicate (its delivery key), a 429 of a rate limit, a handshake that cannot be answered (the code, the
   * hook or mapping, and the client address). Listed a few times a minute per key, then counted.
   */
  series?: string | undefined;
}

/** A record a previous run admitted and did not finish. */
export interface UnfinishedRecord {
  record: AdmittedRecord;
  /** Its agent turns went to the host: they may have run, so they are not run again. */
  handed: boolean;
  /** Those of its turns that went, when only some did (the others waited for a slot and run now). */
  handedRuns?: readonly string[] | undefined;
}

/** A delivery id a previous run accepted, still within its window. */
export interface RememberedDelivery {
  key: string;
  response: AdmittedRecord["response"];
  /** When it was admitted (epoch ms). */
  at: number;
}

/** What the journal holds of the requests finished since a moment (`storedSince`). */
export interface StoredAgain {
  /** Their planned system events, oldest first, whole (with their ids and text). */
  events: PlannedEvent[];
  /** How many requests those events came from. */
  requests: number;
  /**
   * System events of requests finished since then that the journal keeps only by id: their segment was rewritten
   * small once all its records were finished, so they cannot be handed over again.
   */
  compacted: number;
}

/** What a previous run left: the records to finish, oldest first, and the delivery ids to remember. */
export interface JournalBacklog {
  unfinished: UnfinishedRecord[];
  deliveries: RememberedDelivery[];
  /** The system events of the newest finished records (a few, newest last): the host should still hold them. */
  stored?: StoredEvent[];
}

export interface Journal {
  /** Reads what a previous run left; called once, before the first admission. */
  open(): Promise<JournalBacklog>;
  /**
   * Resolves once the record is as durable as configured; a rejection means "not accepted" (the request gets 503).
   * The journal takes the record over: the caller does not read or change it afterwards.
   */
  admit(record: AdmittedRecord): Promise<void>;
  /**
   * The record's agent turns are about to go to the host; written before they do, so a turn is not run twice.
   * `runIds`: only these of them (a record's turns waiting for their mapping's slots leave one by one).
   */
  handed(id: string, runIds?: readonly string[]): void;
  /**
   * Everything the record caused has happened; `outcomes` is what the host told of its system events while they were
   * emitted (event id → queued, coalesced, duplicate).
   */
  done(requestId: string, runs?: readonly RunOutcome[], recovered?: boolean, outcomes?: Outcomes): void;
  /**
   * Lists a request that was answered without admission; best effort, nothing waits for it. Returns false when a
   * limit left it out (it was counted instead), true otherwise; undefined from a journal that does not say (one
   * written for an earlier version), which is taken as listed.
   */
  answered(record: AnsweredRecord, options?: AnsweredOptions): boolean | undefined;
  /** An outcome the host told after the record's `done` line (a delivery's result); best effort, optional. */
  outcome?(id: string, outcomes: Outcomes): void;
  /**
   * The status the caller got, when it is not the admitted answer's (a caller that waited for its agent turn got
   * its outcome, 200, not the admission's 202): the listing shows what the caller saw. Best effort, like
   * `answered`; optional, so a journal written for an earlier version still fits (it lists the admission status).
   * `remembered`: the answer a delivery's duplicates get from now on, when it is not the admitted one (a wake's,
   * which says what became of its events); a journal that keeps delivery ids keeps this one instead.
   */
  responded?(id: string, status: number, remembered?: RememberedDelivery): void;
  /**
   * Tells `observer` of each record once it is written, until the returned function is called. Optional: a journal
   * without it has nothing to show an observer (the inspector then lists what the bus tells of each request).
   */
  observe?(observer: JournalObserver): () => void;
  /**
   * The system events of the requests finished at or after `since` (epoch ms), oldest first: a host whose own state
   * is on disk only up to a moment stores them again at start (by id, so what it kept is a duplicate); `since` 0 asks
   * for everything the journal holds. Optional: a journal that keeps nothing has none.
   */
  storedSince?(since: number): Promise<StoredAgain>;
  close(): Promise<void>;
}

/** What an observer (the inspector) is told as records are written; nothing is told, or built, when none listens. */
export interface JournalObserver {
  /** An accepted request, once durable (its stored request already dropped). */
  admitted?(record: AdmittedRecord): void;
  /** A request answered without admission; `listed` false when a limit left it out. */
  answered?(record: AnsweredRecord, listed: boolean): void;
  done?(id: string, runs: readonly RunOutcome[] | undefined, outcomes: Outcomes | undefined): void;
  outcome?(id: string, outcomes: Outcomes): void;
  responded?(id: string, status: number): void;
}

export type { JournalRun, Outcomes, RunOutcome, StoredEvent };

/** @module Reads a journal directory into one entry per request: what was accepted or refused, and what became of it. */
import type { AdmittedRecord } from "./journal.js";
import {
  type AdmittedLine,
  type AnsweredLine,
  type FinishedLine,
  type JournalLine,
  type Outcomes,
  type PlannedId,
  plannedIds,
  type RunOutcome,
} from "./records.js";
import { listSegments, readSegment } from "./segments.js";

/**
 * What became of a request: `done` (its events went out, its turns' summaries were published), `interrupted`
 * (finished by a restart, a turn reported interrupted), `pending` (accepted, not finished yet: a turn still
 * running, or a gateway that stopped and has not started since), `refused` (an error answer), `duplicate`.
 */
export type JournalState = "done" | "interrupted" | "pending" | "refused" | "duplicate";

export interface JournalEntry {
  /** The record's key in the journal. */
  id: string;
  /** The X-Request-Id the request was answered with (usually the same as `id`). */
  requestId: string;
  at: number;
  hook: string;
  mappingId: string | undefined;
  /** The status the caller got: the admission's, or the turn's outcome for a caller that waited for it. */
  status: number;
  state: JournalState;
  /** The error code of a refusal. */
  code: string | undefined;
  /** When its turns went to the host. */
  handedAt: number | undefined;
  doneAt: number | undefined;
  runs: RunOutcome[] | undefined;
  /** Finished by the recovery at start. */
  recovered: boolean;
  /** The journal key of the request this one replays, when it is a replay. */
  replayOf: string | undefined;
  /** Why it was refused, finer than the code (TOKEN_MISSING, SIGNATURE_MISMATCH, NO_MAPPING, …). */
  reason?: string | undefined;
  /** The message a refused sender got. */
  error?: string | undefined;
  /** The client address of a refused or duplicate request. */
  client?: string | undefined;
  method?: string | undefined;
  /** Path and query without credential parameters. */
  url?: string | undefined;
  /** A refused or duplicate request's headers, credentials `[redacted]`. */
  headers?: Record<string, string> | undefined;
  /** Refusals from the same address left out before this one (the per-minute limit). */
  suppressed?: number | undefined;
  /** The planned events' names and ids (an admitted or compacted record). */
  planned?: PlannedId[] | undefined;
  /** What became of them: event id → queued | coalesced | duplicate; `<runId>:delivery` → sent | failed: … */
  outcomes?: Outcomes | undefined;
  /** The whole record (events, request), when the reader was asked to keep it. */
  record: AdmittedRecord | undefined;
}

export interface ReadOptions {
  /** Which requests to read at all, by time and hook (a listing's filters): the rest cost no memory. */
  where?: (at: number, hook: string) => boolean;
  /** Keep the whole record of the entries this accepts (default: none; a listing needs only the summary). */
  keepRecord?: (id: string) => boolean;
}

/** Every request in the journal, oldest first. A missing directory is an empty journal. */
export async function readJournal(dir: string, options: ReadOptions = {}): Promise<JournalEntry[]> {
  const entries = new Map<string, JournalEntry>();
  for (const segment of await listSegments(dir)) {
    await readSegment(segment.file, (line) => applyLine(entries, line, options));
  }
  return [...entries.values()].sort((a, b) => a.at - b.at);
}

/**
 * Folds one line into the entries read so far, in journal order: a line that names a request starts (or restarts,
 * for a copy carried forward) its entry; the others add to the entry of their key.
 */
export function applyLine(
  entries: Map<string, JournalEntry>,
  line: JournalLine,
  options: ReadOptions = {},
): void {
  if (isRequestLine(line) && options.where?.(line.at, line.hook) === false) return;
  // A record is asked for by either of its names: the journal's key or the X-Request-Id it was answered with.
  const keep = (named: RequestLine) =>
    options.keepRecord?.(named.id) === true || options.keepRecord?.(requestIdOf(named)) === true;
  if (line.t === "admitted") {
    entries.set(line.id, admittedEntry(line, keep(line)));
    return;
  }
  if (line.t === "finished") {
    entries.set(line.id, finishedEntry(line, keep(line)));
    return;
  }
  if (line.t === "answered") {
    entries.set(line.id, answeredEntry(line));
    return;
  }
  const entry = entries.get(line.id);
  if (!entry) return;
  if (line.t === "outcome") {
    entry.outcomes = { ...entry.outcomes, ...line.outcomes };
    return;
  }
  if (line.t === "responded") {
    entry.status = line.status;
    return;
  }
  if (line.t === "handed") {
    entry.handedAt ??= line.at;
    return;
  }
  entry.doneAt = line.at;
  entry.runs = line.runs;
  entry.recovered = line.recovered === true;
  entry.state = finishedState(line.runs);
  // A delivery's result may have come before the done line (a host that sends at once).
  if (line.outcomes !== undefined) entry.outcomes = { ...line.outcomes, ...entry.outcomes };
}

/** A line that names a request: an entry starts from one of these. */
export type RequestLine = AdmittedLine | AnsweredLine | FinishedLine;

export function isRequestLine(line: JournalLine): line is RequestLine {
  return line.t === "admitted" || line.t === "answered" || line.t === "finished";
}

/** The X-Request-Id the request was answered with: the journal's key unless the caller chose its own. */
export function requestIdOf(line: RequestLine): string {
  return line.requestId ?? line.id;
}

/** The fields an entry takes from its line the same way whatever kind of line it is. */
function named(line: RequestLine): Pick<JournalEntry, "id" | "requestId" | "at" | "hook" | "mappingId"> {
  return {
    id: line.id,
    requestId: requestIdOf(line),
    at: line.at,
    hook: line.hook,
    mappingId: line.mappingId,
  };
}

/** A finished record's state: a turn that a restart cut short makes it `interrupted`. */
function finishedState(runs: readonly RunOutcome[] | undefined): JournalState {
  return runs?.some((run) => run.status === "interrupted") ? "interrupted" : "done";
}

function admittedEntry(line: AdmittedLine, keep: boolean): JournalEntry {
  const { t: _t, handed: _handed, handedRuns: _runs, ...record } = line;
  return {
    ...named(line),
    status: line.response.status,
    state: "pending",
    code: undefined,
    handedAt: undefined,
    doneAt: undefined,
    runs: undefined,
    recovered: false,
    replayOf: line.replayOf,
    planned: plannedIds(line.events),
    record: keep ? record : undefined,
  };
}

/** A compacted record: its outcome is in the line; its planned events are no longer kept. */
function finishedEntry(line: FinishedLine, keep: boolean): JournalEntry {
  const record: AdmittedRecord = {
    id: line.id,
    at: line.at,
    hook: line.hook,
    response: line.response ?? { status: line.status },
    events: [],
  };
  if (line.requestId !== undefined) record.requestId = line.requestId;
  if (line.mappingId !== undefined) record.mappingId = line.mappingId;
  if (line.delivery !== undefined) record.delivery = line.delivery;
  if (line.request !== undefined) record.request = line.request;
  if (line.replayOf !== undefined) record.replayOf = line.replayOf;
  return {
    ...named(line),
    status: line.status,
    state: finishedState(line.runs),
    code: undefined,
    handedAt: line.handedAt,
    doneAt: line.doneAt,
    runs: line.runs,
    recovered: line.recovered === true,
    replayOf: line.replayOf,
    planned: line.planned,
    outcomes: line.outcomes,
    record: keep ? record : undefined,
  };
}

/** Answered without admission: listed, with nothing after it to wait for. */
function answeredEntry(line: AnsweredLine): JournalEntry {
  const duplicate = line.code === "DUPLICATE";
  return {
    ...named(line),
    status: line.status,
    state: duplicate ? "duplicate" : "refused",
    code: duplicate ? undefined : line.code,
    handedAt: undefined,
    doneAt: undefined,
    runs: undefined,
    recovered: false,
    replayOf: undefined,
    reason: line.reason,
    error: line.error,
    client: line.client,
    method: line.method,
    url: line.url,
    headers: line.headers,
    suppressed: line.suppressed,
    record: undefined,
  };
}

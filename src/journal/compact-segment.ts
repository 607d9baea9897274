/** @module Rewrites a closed segment whose records are all finished: each record becomes one small `finished` line. */
import { stat } from "node:fs/promises";
import { replaceFile } from "./durable-fs.js";
import {
  type AdmittedLine,
  type DoneLine,
  type FinishedLine,
  type JournalLine,
  type JournalResponse,
  type Outcomes,
  plannedIds,
} from "./records.js";
import { readSegment, segmentLines } from "./segments.js";

/** Lines written per write call while rewriting. */
const LINES_PER_WRITE = 1_000;

export interface CompactResult {
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * A finished record is kept small: its planned events (the payload's text, wrapped, often the largest part) and the
 * separate hand-over, answer and `done` lines go; its identity, answer, outcome and, when stored, the request stay. The
 * file is replaced atomically (a temporary file, synced, renamed over it): a crash leaves the old file or the new.
 * Returns undefined when there was nothing to rewrite (no admitted line left in it).
 */
export async function compactSegment(file: string): Promise<CompactResult | undefined> {
  const handedAt = new Map<string, number>();
  const done = new Map<string, DoneLine>();
  const responded = new Map<string, number>();
  const answers = new Map<string, JournalResponse>();
  const outcomes = new Map<string, Outcomes>();
  const own = new Set<string>();
  await readSegment(file, (line) => {
    if (line.t === "admitted") own.add(line.id);
    else if (line.t === "outcome") outcomes.set(line.id, { ...outcomes.get(line.id), ...line.outcomes });
    else if (line.t === "handed") handedAt.set(line.id, Math.min(handedAt.get(line.id) ?? line.at, line.at));
    else if (line.t === "done") done.set(line.id, line);
    else if (line.t === "responded") {
      responded.set(line.id, line.status);
      if (line.delivery !== undefined && line.response !== undefined) answers.set(line.id, line.response);
    }
  });
  if (own.size === 0) return undefined;
  const bytesBefore = (await stat(file)).size;
  let bytesAfter = 0;
  await replaceFile(file, async (handle) => {
    let pending: string[] = [];
    const write = async () => {
      const bytes = Buffer.from(pending.join(""));
      pending = [];
      await handle.writeFile(bytes);
      bytesAfter += bytes.length;
    };
    // In chunks, as the lines are read: a 64 MiB segment is never held whole.
    for await (const line of segmentLines(file)) {
      const kept = rewrite(line, own, { handedAt, done, responded, answers, outcomes });
      if (kept !== undefined) pending.push(`${JSON.stringify(kept)}\n`);
      if (pending.length >= LINES_PER_WRITE) await write();
    }
    await write();
  });
  return { bytesBefore, bytesAfter };
}

/** What a segment's own lines say about its records, merged into their finished lines. */
interface Later {
  handedAt: ReadonlyMap<string, number>;
  done: ReadonlyMap<string, DoneLine>;
  /** The status the caller got, when it was not the admission's. */
  responded: ReadonlyMap<string, number>;
  /** The answer a delivery's duplicates get, when it is not the admission's (a wake's, with `eventOutcome`). */
  answers: ReadonlyMap<string, JournalResponse>;
  /** What the host told later (a delivery's result). */
  outcomes: ReadonlyMap<string, Outcomes>;
}

/** The line as the compacted segment keeps it; undefined for a line merged into its record's `finished` line. */
function rewrite(line: JournalLine, own: ReadonlySet<string>, later: Later): JournalLine | undefined {
  if (line.t === "admitted") return finishedLine(line, later);
  // The hand-over, the answer and the end of a record of this segment are in its finished line now; a record of
  // an earlier segment keeps its own lines.
  if (
    (line.t === "handed" || line.t === "done" || line.t === "responded" || line.t === "outcome") &&
    own.has(line.id)
  )
    return undefined;
  return line;
}

function finishedLine(line: AdmittedLine, later: Later): FinishedLine {
  const handedAt = later.handedAt.get(line.id);
  const done = later.done.get(line.id);
  const finished: FinishedLine = {
    t: "finished",
    id: line.id,
    at: line.at,
    hook: line.hook,
    status: later.responded.get(line.id) ?? line.response.status,
  };
  if (line.requestId !== undefined) finished.requestId = line.requestId;
  if (line.mappingId !== undefined) finished.mappingId = line.mappingId;
  if (line.delivery !== undefined) {
    finished.delivery = line.delivery;
    // What a duplicate gets again: the admission answer, whatever the first caller got after waiting; a wake's
    // answer as it left, with what became of its events.
    finished.response = later.answers.get(line.id) ?? line.response;
  }
  if (line.request !== undefined) finished.request = line.request;
  if (line.replayOf !== undefined) finished.replayOf = line.replayOf;
  // Names and ids only: what a listing shows of the plan once its text is gone.
  if (line.events.length > 0) finished.planned = plannedIds(line.events);
  if (handedAt !== undefined || line.handed === true) finished.handedAt = handedAt ?? line.at;
  if (done !== undefined) {
    finished.doneAt = done.at;
    if (done.runs !== undefined && done.runs.length > 0) finished.runs = done.runs;
    if (done.recovered === true) finished.recovered = true;
  }
  const told = { ...done?.outcomes, ...later.outcomes.get(line.id) };
  if (Object.keys(told).length > 0) finished.outcomes = told;
  return finished;
}

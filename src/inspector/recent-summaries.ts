/** @module The newest requests of a journal directory as summaries, read from its newest segments only: what the ring starts with. */
import type { Outcomes, RunOutcome } from "../journal/records.js";
import { listSegments, readSegment } from "../journal/segments.js";
import type { InspectorSummary } from "./inspector-source.js";
import { outcomeText } from "./outcome-text.js";
import { admittedSummary, answeredSummary, finishedState } from "./ring-records.js";

/** At most this much of the newest segments is read at start (at least the newest one, whatever its size). */
const SEED_BYTES = 16 * 1024 * 1024;

interface Told {
  outcomes?: Outcomes | undefined;
  runs?: readonly RunOutcome[] | undefined;
}

function setOutcome(row: InspectorSummary, { outcomes, runs }: Told): void {
  const text = outcomeText(outcomes, runs);
  if (text !== undefined) row.outcome = text;
}

/** Oldest first, at most `rows` of them. */
export async function readRecentSummaries(dir: string, rows: number): Promise<InspectorSummary[]> {
  const segments = await listSegments(dir);
  const chosen = [];
  let bytes = 0;
  for (const segment of segments.reverse()) {
    if (chosen.length > 0 && bytes + segment.bytes > SEED_BYTES) break;
    chosen.unshift(segment);
    bytes += segment.bytes;
  }
  const found = new Map<string, InspectorSummary>();
  /** What each row's outcome is made of so far: a delivery's outcome line may come before or after its done line. */
  const told = new Map<string, Told>();
  for (const segment of chosen) {
    await readSegment(segment.file, (line) => {
      switch (line.t) {
        case "admitted": {
          const { t: _t, handed: _handed, handedRuns: _runs, ...record } = line;
          found.set(line.id, admittedSummary(record));
          return;
        }
        case "answered": {
          const { t: _t, ...record } = line;
          found.set(line.id, answeredSummary(record));
          return;
        }
        case "finished": {
          const { t: _t, runs, status, outcomes, planned: _planned, ...named } = line;
          const row = admittedSummary({ ...named, response: { status }, events: [] });
          row.state = finishedState(runs);
          found.set(line.id, row);
          told.set(line.id, { outcomes, runs });
          setOutcome(row, told.get(line.id)!);
          return;
        }
        case "done": {
          const row = found.get(line.id);
          if (!row) return;
          row.state = finishedState(line.runs);
          const before = told.get(line.id);
          const now = { outcomes: { ...line.outcomes, ...before?.outcomes }, runs: line.runs };
          told.set(line.id, now);
          setOutcome(row, now);
          return;
        }
        case "outcome": {
          const row = found.get(line.id);
          if (!row) return;
          const before = told.get(line.id);
          const now = { outcomes: { ...before?.outcomes, ...line.outcomes }, runs: before?.runs };
          told.set(line.id, now);
          setOutcome(row, now);
          return;
        }
        case "responded": {
          const row = found.get(line.id);
          if (row) row.status = line.status;
          return;
        }
        default:
          return;
      }
    });
  }
  return [...found.values()].sort((a, b) => a.at - b.at).slice(-rows);
}

/** @module The newest requests of a journal directory as summaries, read from its newest segments only: what the ring starts with. */
import { listSegments, readSegment } from "../journal/segments.js";
import type { InspectorSummary } from "./inspector-source.js";
import { admittedSummary, answeredSummary, finishedState } from "./ring-records.js";

/** At most this much of the newest segments is read at start (at least the newest one, whatever its size). */
const SEED_BYTES = 16 * 1024 * 1024;

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
  for (const segment of chosen) {
    await readSegment(segment.file, (line) => {
      switch (line.t) {
        case "admitted": {
          const { t: _t, handed: _handed, ...record } = line;
          found.set(line.id, admittedSummary(record));
          return;
        }
        case "answered": {
          const { t: _t, ...record } = line;
          found.set(line.id, answeredSummary(record));
          return;
        }
        case "finished": {
          const { t: _t, runs, status, ...named } = line;
          const row = admittedSummary({ ...named, response: { status }, events: [] });
          row.state = finishedState(runs);
          found.set(line.id, row);
          return;
        }
        case "done": {
          const row = found.get(line.id);
          if (row) row.state = finishedState(line.runs);
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

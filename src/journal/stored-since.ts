/** @module The system events of requests finished since a moment: what a host whose own state lags its journal stores again at start. */
import type { PlannedEvent } from "../events.js";
import { readSegment, type SegmentState } from "./segments.js";

/**
 * The planned `session:system-event`s of every request whose `done` line is at or after `since`, oldest first. Only
 * the segments that can hold such a line are read: after a clean stop none, after a crash the newest.
 */
export async function storedSince(segments: Iterable<SegmentState>, since: number): Promise<PlannedEvent[]> {
  const sorted = [...segments].sort((a, b) => a.seq - b.seq);
  const first = sorted.findIndex((segment) => segment.newestAt >= since);
  if (first === -1) return [];
  // And the segment before: a record done after `since` may have been admitted just before the file rolled over.
  const candidates = sorted.slice(Math.max(0, first - 1));
  const admitted = new Map<string, PlannedEvent[]>();
  const found: PlannedEvent[] = [];
  for (const segment of candidates) {
    await readSegment(segment.file, (line) => {
      if (line.t === "admitted") {
        const events = line.events.filter((planned) => planned.event === "session:system-event");
        if (events.length > 0) admitted.set(line.id, events as PlannedEvent[]);
      } else if (line.t === "done") {
        const events = admitted.get(line.id);
        admitted.delete(line.id);
        if (events !== undefined && line.at >= since) found.push(...events);
      }
    }).catch((error: unknown) => {
      // A segment retention removed meanwhile holds nothing newer than `since`.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    });
  }
  return found;
}

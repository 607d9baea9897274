/** @module The system events of requests finished since a moment: what a host whose own state lags its journal stores again at start. */

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { PlannedEvent } from "../events.js";
import type { StoredAgain } from "./journal.js";
import { parseJournalLine } from "./records.js";
import type { SegmentState } from "./segments.js";

/** A line's kind and key, read from its first characters (every format writes them first), without parsing it. */
const HEAD = /^\{"t":"(a|d|admitted|done|finished)","id":"([^"\\]*)"/;
const SYSTEM_EVENT = "session:system-event";

/**
 * The planned `session:system-event`s of every request whose `done` line is at or after `since`, oldest first. Only
 * the segments that can hold such a line are read: after a clean stop none, after a crash the newest; `since` 0 reads
 * them all (a host whose state is new). Each is read twice, parsing only the lines that matter: first the done and
 * compacted lines (small), then the admitted lines the done lines name; a segment of 100,000 wakes parsed whole
 * took seconds of a start.
 */
export async function storedSince(segments: Iterable<SegmentState>, since: number): Promise<StoredAgain> {
  const sorted = [...segments].sort((a, b) => a.seq - b.seq);
  const first = sorted.findIndex((segment) => segment.newestAt >= since);
  const found: StoredAgain = { events: [], requests: 0, compacted: 0 };
  if (first === -1) return found;
  // And the segment before: a record done after `since` may have been admitted just before the file rolled over.
  const files = sorted.slice(Math.max(0, first - 1)).map((segment) => segment.file);
  // A compacted line is parsed only in a segment with lines after `since` (the one before has none).
  const recent = new Set(sorted.slice(first).map((segment) => segment.file));
  const finished = new Set<string>();
  await eachLine(files, (text, kind, id, file) => {
    if (kind === "finished") {
      if (recent.has(file) && text.includes(SYSTEM_EVENT)) found.compacted += compactedEvents(text, since);
      return;
    }
    if (kind !== "d" && kind !== "done") return;
    const line = parseJournalLine(text);
    if (line?.t === "done" && line.at >= since) finished.add(id);
  });
  if (finished.size === 0) return found;
  await eachLine(files, (text, kind, id) => {
    if ((kind !== "a" && kind !== "admitted") || !finished.has(id)) return;
    const line = parseJournalLine(text);
    if (line?.t !== "admitted") return;
    // Counted once: a record carried forward from an expired segment has a second admitted line.
    finished.delete(id);
    found.requests++;
    for (const planned of line.events)
      if (planned.event === SYSTEM_EVENT) found.events.push(planned as PlannedEvent);
  });
  return found;
}

/** The system events a compacted line names, when its request finished at or after `since`. */
function compactedEvents(text: string, since: number): number {
  const line = parseJournalLine(text);
  if (line?.t !== "finished" || (line.doneAt ?? line.at) < since) return 0;
  return (line.planned ?? []).filter((planned) => planned.event === SYSTEM_EVENT).length;
}

async function eachLine(
  files: readonly string[],
  onLine: (text: string, kind: string, id: string, file: string) => void,
): Promise<void> {
  for (const file of files) {
    try {
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
      for await (const text of lines) {
        const head = HEAD.exec(text);
        if (head !== null) onLine(text, head[1]!, head[2]!, file);
      }
    } catch (error) {
      // A segment retention removed meanwhile holds nothing newer than `since`.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}

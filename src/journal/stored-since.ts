/** @module The system events of requests finished since a moment: what a host whose own state lags its journal stores again at start. */

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { PlannedEvent } from "../events.js";
import { parseJournalLine } from "./records.js";
import type { SegmentState } from "./segments.js";

/** A line's kind and key, read from its first characters (both formats write them first), without parsing it. */
const HEAD = /^\{"t":"(a|d|admitted|done)","id":"([^"\\]*)"/;

/**
 * The planned `session:system-event`s of every request whose `done` line is at or after `since`, oldest first. Only
 * the segments that can hold such a line are read: after a clean stop none, after a crash the newest. Each is read
 * twice, parsing only the lines that matter: first the done lines (small), then the admitted lines they name; a
 * segment of 100,000 wakes parsed whole took seconds of a start.
 */
export async function storedSince(segments: Iterable<SegmentState>, since: number): Promise<PlannedEvent[]> {
  const sorted = [...segments].sort((a, b) => a.seq - b.seq);
  const first = sorted.findIndex((segment) => segment.newestAt >= since);
  if (first === -1) return [];
  // And the segment before: a record done after `since` may have been admitted just before the file rolled over.
  const files = sorted.slice(Math.max(0, first - 1)).map((segment) => segment.file);
  const finished = new Set<string>();
  await eachLine(files, (text, kind, id) => {
    if (kind !== "d" && kind !== "done") return;
    const line = parseJournalLine(text);
    if (line?.t === "done" && line.at >= since) finished.add(id);
  });
  const found: PlannedEvent[] = [];
  if (finished.size === 0) return found;
  await eachLine(files, (text, kind, id) => {
    if ((kind !== "a" && kind !== "admitted") || !finished.has(id)) return;
    const line = parseJournalLine(text);
    if (line?.t !== "admitted") return;
    for (const planned of line.events)
      if (planned.event === "session:system-event") found.push(planned as PlannedEvent);
  });
  return found;
}

async function eachLine(
  files: readonly string[],
  onLine: (text: string, kind: string, id: string) => void,
): Promise<void> {
  for (const file of files) {
    try {
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
      for await (const text of lines) {
        const head = HEAD.exec(text);
        if (head !== null) onLine(text, head[1]!, head[2]!);
      }
    } catch (error) {
      // A segment retention removed meanwhile holds nothing newer than `since`.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}

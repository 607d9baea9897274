/** @module One request's journal entry, found by reading segments newest first and stopping at the one that names it: a detail costs the newest segments, not the whole journal. */
import { applyLine, isRequestLine, type JournalEntry, requestIdOf } from "./read-journal.js";
import type { JournalLine } from "./records.js";
import { listSegments, readSegment, type Segment } from "./segments.js";

/**
 * The newest entry known by any of `names` (its journal key or the X-Request-Id it was answered with), with its whole
 * record; the same entry `readJournal` would give. Its later lines (done, outcomes) are in the segment that names it
 * or newer ones, so no older segment is read. Undefined: no segment names it.
 */
export async function findJournalEntry(
  dir: string,
  names: readonly string[],
): Promise<JournalEntry | undefined> {
  const wanted = new Set(names);
  const segments = (await listSegments(dir)).reverse();
  /** Keys of the records that answer to a wanted name: a follow-up line carries only the key. */
  const keys = new Set(wanted);
  const read: { segment: Segment; lines: JournalLine[] }[] = [];
  let found = false;
  for (const segment of segments) {
    const lines = await linesOf(segment, wanted, keys);
    read.push({ segment, lines });
    if (lines.some((line) => isRequestLine(line) && (wanted.has(line.id) || wanted.has(requestIdOf(line))))) {
      found = true;
      break;
    }
  }
  if (!found) return undefined;
  // Named only by its X-Request-Id: the newer segments read before its key was known are read again for that key.
  const learnt = [...keys].filter((key) => !wanted.has(key));
  if (learnt.length > 0) {
    for (const part of read.slice(0, -1)) part.lines = await linesOf(part.segment, wanted, keys);
  }
  const entries = new Map<string, JournalEntry>();
  const keepRecord = () => true;
  for (const part of read.reverse()) for (const line of part.lines) applyLine(entries, line, { keepRecord });
  return [...entries.values()]
    .filter((entry) => wanted.has(entry.id) || wanted.has(entry.requestId))
    .sort((a, b) => a.at - b.at)
    .at(-1);
}

/** A segment's lines that concern a wanted request, in order; a line naming one by its request id adds its key. */
async function linesOf(
  segment: Segment,
  wanted: ReadonlySet<string>,
  keys: Set<string>,
): Promise<JournalLine[]> {
  const lines: JournalLine[] = [];
  await readSegment(segment.file, (line) => {
    if (isRequestLine(line) && wanted.has(requestIdOf(line))) keys.add(line.id);
    if (keys.has(line.id)) lines.push(line);
  });
  return lines;
}

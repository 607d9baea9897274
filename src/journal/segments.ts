/** @module The journal directory: numbered segment files, listed in order and read line by line, and what is tracked of each. */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { type JournalLine, parseJournalLine } from "./records.js";

const SEGMENT = /^journal-(\d{8})\.jsonl$/;

export interface Segment {
  seq: number;
  file: string;
  bytes: number;
}

/** A segment as the open journal tracks it: what retention, compaction and the checkpoint decide by. */
export interface SegmentState {
  seq: number;
  file: string;
  openedAt: number;
  /** Time of its newest line: the segment expires a retention period after it. */
  newestAt: number;
  holdsDeliveries: boolean;
  /** Its finished records were rewritten small. */
  compacted: boolean;
  /** Admitted records in it that are not done. */
  unfinished: number;
}

export function segmentFile(dir: string, seq: number): string {
  return path.join(dir, `journal-${String(seq).padStart(8, "0")}.jsonl`);
}

/** The directory's segments, oldest first; an absent directory has none. */
export async function listSegments(dir: string): Promise<Segment[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const segments: Segment[] = [];
  for (const name of names) {
    const match = SEGMENT.exec(name);
    if (!match) continue;
    const file = path.join(dir, name);
    segments.push({ seq: Number(match[1]), file, bytes: (await stat(file)).size });
  }
  return segments.sort((a, b) => a.seq - b.seq);
}

/**
 * Calls `onLine` for every line that parses, from byte `start` on (a line boundary); returns how many did not (a
 * torn last line after a crash, say).
 */
export async function readSegment(
  file: string,
  onLine: (line: JournalLine) => void,
  start = 0,
): Promise<number> {
  let unreadable = 0;
  const lines = createInterface({ input: createReadStream(file, { start }), crlfDelay: Infinity });
  for await (const text of lines) {
    if (text === "") continue;
    const line = parseJournalLine(text);
    if (line === undefined) unreadable++;
    else onLine(line);
  }
  return unreadable;
}

/**
 * The lines that parse, in order, for a reader that awaits between them (a rewrite that writes as it reads, so a
 * 64 MiB segment is never held whole); unlike `readSegment`, lines that do not parse are skipped uncounted.
 */
export async function* segmentLines(file: string): AsyncGenerator<JournalLine> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const text of lines) {
    const line = text === "" ? undefined : parseJournalLine(text);
    if (line !== undefined) yield line;
  }
}

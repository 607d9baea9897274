/** @module Opening the journal: what the previous run left, read from its checkpoint and the segment lines after it. */
import { mkdir } from "node:fs/promises";
import type { Clock } from "../clock.js";
import type { HostLogger } from "../host/contract.js";
import { BacklogScan, NewestStored, RecentDeliveries, type ScannedRecord } from "./backlog-scan.js";
import { type Checkpoint, readCheckpoint } from "./checkpoint.js";
import { listSegments, readSegment, type Segment, type SegmentState } from "./segments.js";

export interface LoadSettings {
  dir: string;
  /** The most delivery ids kept (`hooks.dedupe.maxEntries`). */
  maxDeliveries: number;
  clock: Clock;
  logger: HostLogger;
}

/** What the previous run left, for the journal to take over before it writes anything. */
export interface LoadedJournal {
  /** When the directory was read: the segments found count as opened then. */
  now: number;
  /** The segments on disk, oldest first, with what the checkpoint knew of them. */
  segments: SegmentState[];
  /** The highest segment number on disk (0 for none): the journal writes into a fresh one after it. */
  lastSeq: number;
  /** Records admitted and not done, by id, each with the segment it was last written to (which may be gone). */
  admitted: Map<string, ScannedRecord>;
  deliveries: RecentDeliveries;
  stored: NewestStored;
}

/**
 * Reads what the previous run left. With a checkpoint, only what it cannot answer is read: the lines after it
 * (the rest of the segment it points into, and the segments after), so a start costs what is unfinished and what
 * came last, not the journal's size. Without one (a journal of an older version, a checkpoint that does not fit
 * the files), every segment is read.
 */
export async function loadJournal(settings: LoadSettings): Promise<LoadedJournal> {
  const { dir, clock, logger } = settings;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const now = clock.now();
  const found = await listSegments(dir);
  const checkpoint = fitting(await readCheckpoint(dir), found);
  const deliveries = new RecentDeliveries(settings.maxDeliveries);
  const stored = new NewestStored(checkpoint?.stored);
  const scan = new BacklogScan(deliveries, stored);
  const facts = new Map((checkpoint?.segments ?? []).map((known) => [known.seq, known]));
  for (const delivery of checkpoint?.deliveries ?? []) deliveries.add(delivery);
  for (const { record, handed, handedRuns, seq } of checkpoint?.unfinished ?? []) {
    scan.admitted.set(record.id, { record: { t: "admitted", ...record }, handed, handedRuns, seq });
  }
  const segments: SegmentState[] = [];
  let unreadable = 0;
  let lastSeq = 0;
  let bytesRead = 0;
  for (const segmentFound of found) {
    lastSeq = segmentFound.seq;
    const known = facts.get(segmentFound.seq);
    const segment: SegmentState = {
      seq: segmentFound.seq,
      file: segmentFound.file,
      openedAt: now,
      newestAt: known?.newestAt ?? 0,
      holdsDeliveries: known?.holdsDeliveries ?? false,
      compacted: known?.compacted ?? false,
      unfinished: 0,
    };
    // Every segment is tracked, read or not: retention and compaction need them all.
    segments.push(segment);
    if (checkpoint !== undefined && segment.seq < checkpoint.seq) continue;
    const start = checkpoint?.seq === segment.seq ? checkpoint.offset : 0;
    bytesRead += segmentFound.bytes - start;
    unreadable += await readSegment(segment.file, (line) => scan.apply(line, segment), start);
  }
  if (unreadable > 0) {
    logger.warn("journal: unreadable lines skipped (a write cut short by a crash)", {
      lines: unreadable,
      dir,
    });
  }
  logger.debug("journal: read", {
    segments: found.length,
    checkpoint: checkpoint !== undefined,
    bytesRead,
    unfinished: scan.admitted.size,
  });
  return { now, segments, lastSeq, admitted: scan.admitted, deliveries, stored };
}

/**
 * The checkpoint, if it fits the files: every segment before its point must be one it knows, and the segment it
 * points into must be at least as long as it says (a file cut shorter means it describes something else).
 */
function fitting(checkpoint: Checkpoint | undefined, found: readonly Segment[]): Checkpoint | undefined {
  if (checkpoint === undefined) return undefined;
  const known = new Set(checkpoint.segments.map((segment) => segment.seq));
  for (const segment of found) {
    if (segment.seq < checkpoint.seq && !known.has(segment.seq)) return undefined;
    if (segment.seq === checkpoint.seq && segment.bytes < checkpoint.offset) return undefined;
  }
  return checkpoint;
}

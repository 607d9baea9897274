/** @module The journal on disk: JSON lines in numbered segments, group commit, recovery of what a crash left, retention by segment. */
import { mkdir, unlink } from "node:fs/promises";
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { HookMetrics, JournalPending } from "../metrics/metrics.js";
import { AppendLog, type FsyncPolicy, type JournalIo, nodeIo } from "./append-log.js";
import { BacklogScan, NewestStored, RecentDeliveries } from "./backlog-scan.js";
import { type Checkpoint, readCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { compactSegment } from "./compact-segment.js";
import type {
  AdmittedRecord,
  AnsweredRecord,
  Journal,
  JournalBacklog,
  RunOutcome,
  UnfinishedRecord,
} from "./journal.js";
import { listSegments, readSegment, type Segment, segmentFile } from "./segments.js";

const HOUR_MS = 3_600_000;
/** A segment is closed past this size… */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
/** …or this age, so that retention can drop whole files: the journal holds at most one segment past its retention. */
export const SEGMENT_MS = HOUR_MS;
const COMPACT_EVERY_MS = 10 * 60_000;
/**
 * How long a stop waits for the host to confirm what it stored. A host that cannot write (a full disk) may keep its
 * writes and try again for longer; the records it has not confirmed stay unfinished, and the next start finishes them.
 */
const HOST_WAIT_AT_CLOSE_MS = 2_000;

export interface FileJournalSettings {
  dir: string;
  fsync: FsyncPolicy;
  retainHours: number;
  /** How long delivery ids are remembered (`hooks.dedupe.windowSeconds`): segments holding them live as long. */
  deliveryWindowMs: number;
  /** The most delivery ids handed back at start (`hooks.dedupe.maxEntries`). */
  maxDeliveries: number;
  clock: Clock;
  logger: HostLogger;
  io?: JournalIo;
  /** The host's "what you emitted so far is stored" (see the host contract); `done` lines wait for it. */
  hostPersisted?: (() => Promise<void>) | undefined;
  /** Told each fsync's duration, and where a scrape reads the backlog. */
  metrics?: HookMetrics;
  segmentBytes?: number;
  segmentMs?: number;
  compactEveryMs?: number;
}

interface SegmentState {
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

/** An admitted record not done yet. */
interface InFlight {
  /** The record without its stored request (which can be megabytes), to carry it forward if its segment expires. */
  record: AdmittedRecord;
  seq: number;
  handed: boolean;
}

export class FileJournal implements Journal {
  private readonly log: AppendLog;
  private readonly segments = new Map<number, SegmentState>();
  private readonly inFlight = new Map<string, InFlight>();
  private opening: Promise<JournalBacklog> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private compacting: Promise<void> | undefined;
  private closed = false;
  /** `done` lines waiting for the host to store what their events caused, with their record ids. */
  private doneLines: Array<{ id: string; line: string }> = [];
  private awaitingHost: Promise<void> | undefined;
  /** Counts close() calls: a wait for the host that outlives its run writes nothing into the next one's file. */
  private run = 0;
  /** Delivery ids admitted lately, for the checkpoint (the store keeps its own copy). */
  private deliveries: RecentDeliveries;
  private stored = new NewestStored();
  /** Checkpoint writes, one after the other. */
  private checkpointing: Promise<void> = Promise.resolve();
  private checkpointFailing = false;
  /** The segment the newest written checkpoint points into: segments before it may be rewritten, it may not. */
  private checkpointSeq = 0;
  /** Where the last checkpoint was taken (segment, offset, unfinished count). */
  private checkpointPoint: string | undefined;
  /** Rewriting finished segments small, in the background. */
  private rewriting: Promise<void> | undefined;

  constructor(private readonly settings: FileJournalSettings) {
    const metrics = settings.metrics;
    this.log = new AppendLog(
      settings.fsync,
      (size) => this.rollover(size),
      settings.io ?? nodeIo,
      metrics ? (seconds) => metrics.journalFsync(seconds) : undefined,
      // A new segment: the one before is complete, and the next start need not read it.
      () => this.checkpoint(),
    );
    this.deliveries = new RecentDeliveries(settings.maxDeliveries);
    metrics?.journalBacklog?.(() => this.pending());
  }

  /** The backlog now: records not done yet, lines not yet synced. */
  pending(): JournalPending {
    return { unfinished: this.inFlight.size, unsynced: this.log.unsynced };
  }

  /** fsyncs issued and lines made durable since start (the bench reports fsyncs per second). */
  get stats(): Readonly<AppendLog["stats"]> {
    return this.log.stats;
  }

  /** Reads the directory; after `close()`, a new `open()` reads it again (a service started a second time). */
  open(): Promise<JournalBacklog> {
    if (this.opening === undefined) {
      this.closed = false;
      this.opening = this.load();
    }
    return this.opening;
  }

  async admit(record: AdmittedRecord): Promise<void> {
    await this.open();
    // The kind is put in front of the record's own JSON rather than spread into a copy of it: the record can carry a
    // large body, and a copy per request showed in profiles (bench/PROFILE.md).
    const line = `{"t":"admitted",${JSON.stringify(record).slice(1)}`;
    // What stays in memory until the record is done is the record without its stored request (which can be
    // megabytes); the caller hands the record over and does not read it again.
    delete record.request;
    // Tracked in the same turn as the sync that made it durable: a checkpoint taken at any moment has it.
    await this.log.append(line, (seq) => {
      const segment = this.segments.get(seq);
      if (segment) {
        segment.unfinished++;
        segment.newestAt = Math.max(segment.newestAt, record.at);
        if (record.delivery !== undefined) segment.holdsDeliveries = true;
      }
      if (record.delivery !== undefined) {
        this.deliveries.add({ key: record.delivery, response: record.response, at: record.at });
      }
      this.inFlight.set(record.id, { record, seq, handed: false });
    });
  }

  /**
   * Written at once, before the turns go out, so that the turn starts as the answer leaves; not synced: it
   * survives a crash of the process, and a power cut in the moment after may cost a turn run twice.
   */
  handed(id: string): void {
    const entry = this.inFlight.get(id);
    if (entry) entry.handed = true;
    this.log.writeNow(JSON.stringify({ t: "handed", id, at: this.settings.clock.now() }));
  }

  done(id: string, runs?: readonly RunOutcome[], recovered?: boolean): void {
    const at = this.settings.clock.now();
    this.touch(at);
    this.doneLines.push({ id, line: doneLine(id, at, runs, recovered) });
    this.awaitingHost ??= this.writeDoneLines();
  }

  /** A record is finished in memory only once its `done` line is written: until then retention carries it. */
  private finished(id: string): void {
    const entry = this.inFlight.get(id);
    if (!entry) return;
    this.inFlight.delete(id);
    this.stored.add(entry.record);
    const segment = this.segments.get(entry.seq);
    if (segment) segment.unfinished--;
  }

  /**
   * Writes the `done` lines once the host has stored what their events caused: a crash in between leaves the
   * records unfinished, and the next start emits their events again by id rather than losing them. Lines that
   * arrive meanwhile wait for the next round.
   */
  private async writeDoneLines(): Promise<void> {
    const run = this.run;
    while (this.doneLines.length > 0) {
      const lines = this.doneLines;
      this.doneLines = [];
      let stored = true;
      try {
        await this.settings.hostPersisted?.();
      } catch (error) {
        stored = false;
        // Left unfinished: the next start hands their events over again.
        this.settings.logger.warn(
          `journal: the gateway could not store what was handed over: ${errorMessage(error)}`,
        );
      }
      // Stopped meanwhile: the file is closed (or another run's), and these records are left for the next start.
      if (this.run !== run) return;
      if (!stored) continue;
      for (const { id, line } of lines) {
        this.log.note(line);
        this.finished(id);
      }
    }
    this.awaitingHost = undefined;
  }

  answered(record: AnsweredRecord): void {
    if (this.closed || this.opening === undefined) return;
    this.touch(record.at);
    this.log.note(JSON.stringify({ t: "answered", ...record }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.awaitingHost !== undefined) await withinMs(this.awaitingHost, HOST_WAIT_AT_CLOSE_MS);
    this.run++;
    this.awaitingHost = undefined;
    this.doneLines = [];
    if (this.opening === undefined) return;
    await this.opening.catch(() => undefined);
    await this.compacting;
    await this.rewriting;
    await this.log.drain();
    // Everything is settled now: the next start reads nothing but this.
    this.checkpoint();
    await this.checkpointing;
    this.log.close();
    // Nothing of this run is kept: a later open() reads the directory afresh.
    this.opening = undefined;
    this.checkpointPoint = undefined;
    this.segments.clear();
    this.inFlight.clear();
    const { fsyncs, durableLines } = this.log.stats;
    this.settings.logger.info("journal closed", { fsyncs, durableLines });
  }

  /** Deletes expired segments now (also runs on a timer); exposed for tests and `hooks journal`. */
  compact(): Promise<void> {
    this.compacting ??= this.compactSegments().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /**
   * Reads what the previous run left. With a checkpoint, only what it cannot answer is read: the lines after it
   * (the rest of the segment it points into, and the segments after), so a start costs what is unfinished and what
   * came last, not the journal's size. Without one (a journal of an older version, a checkpoint that does not fit
   * the files), every segment is read, as before, and a checkpoint is written at once.
   */
  private async load(): Promise<JournalBacklog> {
    const { dir, clock, logger } = this.settings;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const now = clock.now();
    const found = await listSegments(dir);
    const checkpoint = fitting(await readCheckpoint(dir), found);
    this.deliveries = new RecentDeliveries(this.settings.maxDeliveries);
    this.stored = new NewestStored(checkpoint?.stored);
    const scan = new BacklogScan(this.deliveries, this.stored);
    const facts = new Map((checkpoint?.segments ?? []).map((known) => [known.seq, known]));
    for (const delivery of checkpoint?.deliveries ?? []) this.deliveries.add(delivery);
    for (const { record, handed, seq } of checkpoint?.unfinished ?? []) {
      scan.admitted.set(record.id, { record: { t: "admitted", ...record }, handed, seq });
    }
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
      this.segments.set(segment.seq, segment);
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
    if (this.closed) return { unfinished: [], deliveries: [], stored: [] };
    // Always a fresh segment: the last one may end in a torn line.
    this.startSegment(lastSeq + 1, now);
    this.log.openFile(lastSeq + 1, segmentFile(dir, lastSeq + 1));
    const unfinished: UnfinishedRecord[] = [];
    for (const [id, { record, handed, seq }] of scan.admitted) {
      const { t: _t, handed: _handed, ...rest } = record;
      unfinished.push({ record: rest, handed });
      const { request: _request, ...kept } = rest;
      // A record whose segment is gone (carried forward while a checkpoint named the old one) belongs to the newest.
      const owner = this.segments.get(seq) ?? this.segments.get(lastSeq + 1)!;
      this.inFlight.set(id, { record: kept, seq: owner.seq, handed });
      owner.unfinished++;
    }
    // Oldest first, as admitted: a copy carried forward sits in a later file than records admitted after it.
    unfinished.sort((a, b) => a.record.at - b.record.at);
    this.checkpoint();
    const compactEveryMs = this.settings.compactEveryMs ?? Math.min(COMPACT_EVERY_MS, this.segmentMs);
    this.timer = setInterval(() => void this.compact(), compactEveryMs);
    this.timer.unref();
    // Expired segments go now; rewriting finished ones waits for the timer, so a start does not compete with it.
    this.compacting = this.compactSegments(false).finally(() => {
      this.compacting = undefined;
    });
    await this.compacting;
    return {
      unfinished,
      deliveries: this.deliveries.since(now - this.settings.deliveryWindowMs),
      stored: this.stored.events(),
    };
  }

  /**
   * Writes a checkpoint of this moment: every record admitted and durable so far is in memory (tracked in the turn
   * its sync completed), so "everything before the settled end of the current segment" is summed up exactly.
   * Written in the background, one after the other; a failure (a full disk) keeps the previous one, which is still
   * true, only older.
   */
  private checkpoint(): void {
    if (this.opening === undefined) return;
    const point = `${this.log.currentSeq}:${this.log.settledSize}:${this.inFlight.size}`;
    // Nothing moved since the last one (an idle journal's timer).
    if (point === this.checkpointPoint) return;
    this.checkpointPoint = point;
    const now = this.settings.clock.now();
    const snapshot: Checkpoint = {
      v: 1,
      seq: this.log.currentSeq,
      offset: this.log.settledSize,
      segments: [...this.segments.values()].map(({ seq, newestAt, holdsDeliveries, compacted }) => ({
        seq,
        newestAt,
        holdsDeliveries,
        ...(compacted ? { compacted } : {}),
      })),
      unfinished: [...this.inFlight.values()].map(({ record, seq, handed }) => ({ seq, handed, record })),
      deliveries: this.deliveries.since(now - this.settings.deliveryWindowMs),
      stored: this.stored.snapshot(),
    };
    this.checkpointing = this.checkpointing.then(() => {
      try {
        writeCheckpoint(this.settings.dir, snapshot);
        this.checkpointSeq = snapshot.seq;
        this.checkpointFailing = false;
      } catch (error) {
        // Tried again at the next occasion even if nothing moves.
        this.checkpointPoint = undefined;
        if (this.checkpointFailing) return;
        this.checkpointFailing = true;
        this.settings.logger.warn(
          `journal: could not write its checkpoint (the next start reads more): ${errorMessage(error)}`,
        );
      }
    });
  }

  /** A segment's longest life before the next starts: an hour, or a quarter of the retention when that is shorter. */
  private get segmentMs(): number {
    return this.settings.segmentMs ?? Math.min(SEGMENT_MS, (this.settings.retainHours * HOUR_MS) / 4);
  }

  private startSegment(seq: number, now: number): SegmentState {
    const segment: SegmentState = {
      seq,
      file: segmentFile(this.settings.dir, seq),
      openedAt: now,
      newestAt: now,
      holdsDeliveries: false,
      compacted: false,
      unfinished: 0,
    };
    this.segments.set(seq, segment);
    return segment;
  }

  /** Asked by the log between batches: a new segment once the current one is big or old enough. */
  private rollover(size: number): { seq: number; file: string } | undefined {
    const current = this.segments.get(this.log.currentSeq);
    if (!current || size === 0) return undefined;
    const now = this.settings.clock.now();
    const full = size >= (this.settings.segmentBytes ?? SEGMENT_BYTES);
    const old = now - current.openedAt >= this.segmentMs;
    if (!full && !old) return undefined;
    const next = this.startSegment(current.seq + 1, now);
    return { seq: next.seq, file: next.file };
  }

  private touch(at: number): void {
    const current = this.segments.get(this.log.currentSeq);
    if (current) current.newestAt = Math.max(current.newestAt, at);
  }

  /**
   * Drops the oldest segments whose retention has passed, oldest first and only as a prefix: a later segment may
   * hold the `done` line of an earlier one's record, and must not go first. A record still unfinished in an
   * expiring segment is copied into the current one before the file goes.
   */
  private async compactSegments(rewrite = true): Promise<void> {
    // A file being rewritten is not deleted under it.
    await this.rewriting;
    const now = this.settings.clock.now();
    const retainMs = this.settings.retainHours * HOUR_MS;
    const ordered = [...this.segments.values()].sort((a, b) => a.seq - b.seq);
    for (const segment of ordered) {
      if (segment.seq >= this.log.currentSeq || this.closed) break;
      const keepMs = segment.holdsDeliveries ? Math.max(retainMs, this.settings.deliveryWindowMs) : retainMs;
      if (segment.newestAt + keepMs > now) break;
      if (segment.unfinished > 0) {
        try {
          await this.carryForward(segment);
        } catch (error) {
          this.settings.logger.warn(
            `journal: could not move unfinished records forward: ${errorMessage(error)}`,
          );
          break;
        }
      }
      try {
        await unlink(segment.file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
          this.settings.logger.warn(`journal: could not remove an expired segment: ${errorMessage(error)}`, {
            file: segment.file,
          });
          break;
        }
      }
      this.segments.delete(segment.seq);
    }
    // An idle journal still moves on, so its last segment can expire too.
    try {
      this.log.rollIfIdle();
    } catch (error) {
      this.settings.logger.warn(`journal: could not start a new segment: ${errorMessage(error)}`);
    }
    if (!rewrite || this.closed) return;
    // Also on this timer: a crash reads at most ten minutes of lines past the checkpoint (or one segment).
    this.checkpoint();
    // Not awaited: a start must not wait for history to be rewritten.
    this.rewriting ??= this.rewriteFinished().finally(() => {
      this.rewriting = undefined;
    });
  }

  /**
   * Rewrites closed segments whose records are all finished so each record is one small line (compact-segment).
   * Only segments before the one the last written checkpoint points into: that checkpoint's byte offset must stay
   * true. One segment at a time, oldest first, stopping when the journal closes.
   */
  private async rewriteFinished(): Promise<void> {
    const ordered = [...this.segments.values()].sort((a, b) => a.seq - b.seq);
    for (const segment of ordered) {
      if (this.closed || segment.seq >= this.checkpointSeq || segment.seq >= this.log.currentSeq) return;
      if (segment.compacted || segment.unfinished > 0) continue;
      try {
        const result = await compactSegment(segment.file);
        segment.compacted = true;
        if (result !== undefined)
          this.settings.logger.debug("journal: finished records compacted", { ...result });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        this.settings.logger.warn(`journal: could not compact a finished segment: ${errorMessage(error)}`, {
          file: segment.file,
        });
        return;
      }
    }
  }

  private async carryForward(segment: SegmentState): Promise<void> {
    for (const [id, entry] of this.inFlight) {
      if (entry.seq !== segment.seq) continue;
      // Durable before the old segment goes; the hand-over is part of the copied line, not a marker beside it.
      const line = { t: "admitted", ...entry.record, ...(entry.handed ? { handed: true } : {}) };
      await this.log.append(JSON.stringify(line), (seq) => {
        // The record may have been finished while it was being copied.
        if (this.inFlight.get(id) !== entry) return;
        entry.seq = seq;
        segment.unfinished--;
        const target = this.segments.get(seq);
        if (target) target.unfinished++;
      });
    }
  }
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

/** Waits for `promise`, but no longer than `ms`. */
async function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise, timeout]);
  clearTimeout(timer);
}

/** A `done` line, written for every admitted request: built as text, without an object to stringify per request. */
function doneLine(id: string, at: number, runs?: readonly RunOutcome[], recovered?: boolean): string {
  const extra =
    (runs !== undefined && runs.length > 0 ? `,"runs":${JSON.stringify(runs)}` : "") +
    (recovered ? `,"recovered":true` : "");
  return `{"t":"done","id":${JSON.stringify(id)},"at":${at}${extra}}`;
}

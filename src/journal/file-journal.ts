/** @module The journal on disk: a record's lines from admission to done, the segment it goes to, and retention by segment. */

import { unlink } from "node:fs/promises";
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { HookMetrics, JournalPending } from "../metrics/metrics.js";
import { AnsweredLimits } from "./answered-limits.js";
import { AppendLog, type FsyncPolicy, type JournalIo, nodeIo } from "./append-log.js";
import { NewestStored, RecentDeliveries } from "./backlog-scan.js";
import { type Checkpoint, CheckpointWriter } from "./checkpoint.js";
import { compactEvents } from "./compact-line.js";
import { compactSegment } from "./compact-segment.js";
import { DoneLines, type DurabilityBarrier } from "./done-lines.js";
import type {
  AdmittedRecord,
  AnsweredOptions,
  AnsweredRecord,
  Journal,
  JournalBacklog,
  JournalObserver,
  Outcomes,
  RememberedDelivery,
  RunOutcome,
  StoredAgain,
  UnfinishedRecord,
} from "./journal.js";
import { encodeAdmitted, encodeAdmittedLine, encodeDone, encodeHanded } from "./line-format.js";
import { loadJournal } from "./load-journal.js";
import { type SegmentState, segmentFile } from "./segments.js";
import { storedSince } from "./stored-since.js";

const HOUR_MS = 3_600_000;
/** A segment is closed past this size… */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
/** …or this age, so that retention can drop whole files: the journal holds at most one segment past its retention. */
export const SEGMENT_MS = HOUR_MS;
const COMPACT_EVERY_MS = 10 * 60_000;
/** The config's defaults, for a journal built without one (tests, embedders). */
const DEFAULT_REFUSED_PER_MINUTE = 60;
const DEFAULT_REFUSED_TOTAL_PER_MINUTE = 600;
const DEFAULT_REFUSED_BYTES_PER_MINUTE = 1024 * 1024;

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
  /**
   * The host, whose `persisted()` says "what you emitted so far is stored" (see the host contract): `done` lines wait
   * for it. Read when a batch is written: a host may install it after registration.
   */
  host?: DurabilityBarrier | undefined;
  /** Told each fsync's duration, and where a scrape reads the backlog. */
  metrics?: HookMetrics;
  /** Refusals listed per client address per minute before any credential was accepted (`hooks.journal.refusedPerMinute`). */
  refusedPerMinute?: number;
  /** The same for all addresses together, in lines and bytes (`refusedTotalPerMinute`, `refusedBytesPerMinute`). */
  refusedTotalPerMinute?: number;
  refusedBytesPerMinute?: number;
  segmentBytes?: number;
  segmentMs?: number;
  compactEveryMs?: number;
}

/** An admitted record not done yet. */
interface InFlight {
  /** The record without its stored request (which can be megabytes), to carry it forward if its segment expires. */
  record: AdmittedRecord;
  seq: number;
  handed: boolean;
  /** Its turns that went, when only some did. */
  handedRuns?: string[] | undefined;
}

export class FileJournal implements Journal {
  private readonly log: AppendLog;
  private readonly segments = new Map<number, SegmentState>();
  private readonly inFlight = new Map<string, InFlight>();
  private opening: Promise<JournalBacklog> | undefined;
  /** The directory was read: admission needs no wait for `opening`. */
  private loaded = false;
  private timer: NodeJS.Timeout | undefined;
  private compacting: Promise<void> | undefined;
  private closed = false;
  private readonly doneLines: DoneLines;
  /** Delivery ids admitted lately, for the checkpoint (the store keeps its own copy). */
  private deliveries: RecentDeliveries;
  private stored = new NewestStored();
  private readonly checkpoints: CheckpointWriter;
  /** Rewriting finished segments small, in the background. */
  private rewriting: Promise<void> | undefined;
  private readonly limits: AnsweredLimits;
  /** Told of each record once written (the inspector); empty unless someone observes. */
  private readonly observers: JournalObserver[] = [];

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
    // A record is finished in memory only once its `done` line is written: until then retention carries it.
    this.doneLines = new DoneLines(settings.host, settings.logger, (id, line) => {
      this.log.note(line);
      this.finished(id);
    });
    this.deliveries = new RecentDeliveries(settings.maxDeliveries);
    this.checkpoints = new CheckpointWriter(settings.dir, settings.logger);
    const totalLines = settings.refusedTotalPerMinute ?? DEFAULT_REFUSED_TOTAL_PER_MINUTE;
    const totalBytes = settings.refusedBytesPerMinute ?? DEFAULT_REFUSED_BYTES_PER_MINUTE;
    this.limits = new AnsweredLimits({
      perClient: settings.refusedPerMinute ?? DEFAULT_REFUSED_PER_MINUTE,
      totalLines,
      totalBytes,
      report: (suppressed, since) =>
        settings.logger.warn(
          `journal: ${suppressed} refused requests were not listed: refusals from all addresses together passed ${totalLines} lines or ${totalBytes} bytes in the minute from ${new Date(since).toISOString()}`,
          { suppressed },
        ),
    });
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
      this.opening = this.load().then((backlog) => {
        this.loaded = !this.closed;
        return backlog;
      });
    }
    return this.opening;
  }

  admit(record: AdmittedRecord): Promise<void> {
    // Once the journal is open, admitting takes no turn of the microtask queue of its own.
    return this.loaded ? this.write(record) : this.open().then(() => this.write(record));
  }

  private write(record: AdmittedRecord): Promise<void> {
    const line = encodeAdmittedLine(record);
    // What stays in memory until the record is done is the record without its stored request (which can be
    // megabytes); the caller hands the record over and does not read it again. Unset, not deleted: a delete makes
    // the object a slow dictionary.
    record.request = undefined;
    // Tracked in the same turn as the sync that made it durable: a checkpoint taken at any moment has it.
    const written = this.log.append(line, (seq) => this.track(record, seq));
    if (this.observers.length === 0) return written as Promise<unknown> as Promise<void>;
    return written.then(() => {
      for (const observer of this.observers) observer.admitted?.(record);
    });
  }

  private track(record: AdmittedRecord, seq: number): void {
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
  }

  async storedSince(since: number): Promise<StoredAgain> {
    await this.open();
    return storedSince(this.segments.values(), since);
  }

  observe(observer: JournalObserver): () => void {
    this.observers.push(observer);
    return () => {
      const at = this.observers.indexOf(observer);
      if (at !== -1) this.observers.splice(at, 1);
    };
  }

  /**
   * Written at once, before the turns go out, so that the turn starts as the answer leaves; not synced: it
   * survives a crash of the process, and a power cut in the moment after may cost a turn run twice.
   */
  handed(id: string, runIds?: readonly string[]): void {
    const entry = this.inFlight.get(id);
    const at = this.settings.clock.now();
    if (runIds === undefined) {
      if (entry) entry.handed = true;
      this.log.writeNow(encodeHanded(id, at));
      return;
    }
    if (entry) entry.handedRuns = [...(entry.handedRuns ?? []), ...runIds];
    this.log.writeNow(encodeHanded(id, at, runIds));
  }

  done(id: string, runs?: readonly RunOutcome[], recovered?: boolean, outcomes?: Outcomes): void {
    const at = this.settings.clock.now();
    this.touch(at);
    this.doneLines.add(id, encodeDone(id, at, runs, recovered, outcomes));
    for (const observer of this.observers) observer.done?.(id, runs, outcomes);
  }

  private finished(id: string): void {
    const entry = this.inFlight.get(id);
    if (!entry) return;
    this.inFlight.delete(id);
    this.stored.add(entry.record);
    const segment = this.segments.get(entry.seq);
    if (segment) segment.unfinished--;
  }

  answered(record: AnsweredRecord, options?: AnsweredOptions): boolean {
    // Not a limit: a journal not open keeps nothing.
    if (this.closed || this.opening === undefined) return true;
    const suppressed = this.limits.admit(record, options);
    for (const observer of this.observers) observer.answered?.(record, suppressed !== undefined);
    if (suppressed === undefined) return false;
    if (suppressed > 0) record.suppressed = suppressed;
    this.touch(record.at);
    const line = JSON.stringify({ t: "answered", ...record });
    // Measured only where a budget counts bytes: a refusal before any credential was accepted.
    this.limits.listed(options, options?.perClient === true ? Buffer.byteLength(line) + 1 : 0);
    this.log.note(line);
    return true;
  }

  outcome(id: string, outcomes: Outcomes): void {
    if (this.closed || this.opening === undefined) return;
    const at = this.settings.clock.now();
    this.touch(at);
    this.log.note(JSON.stringify({ t: "outcome", id, at, outcomes }));
    for (const observer of this.observers) observer.outcome?.(id, outcomes);
  }

  responded(id: string, status: number, remembered?: RememberedDelivery): void {
    if (this.closed || this.opening === undefined) return;
    for (const observer of this.observers) observer.responded?.(id, status);
    const at = this.settings.clock.now();
    this.touch(at);
    if (remembered === undefined) {
      this.log.note(JSON.stringify({ t: "responded", id, at, status }));
      return;
    }
    // The next checkpoint keeps it; until then the line does (a start reads it after the admitted one).
    this.deliveries.add(remembered);
    const { key, response } = remembered;
    this.log.note(JSON.stringify({ t: "responded", id, at, status, delivery: key, response }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.loaded = false;
    if (this.timer) clearInterval(this.timer);
    this.limits.flush();
    await this.doneLines.stop();
    if (this.opening === undefined) return;
    await this.opening.catch(() => undefined);
    await this.compacting;
    await this.rewriting;
    await this.log.drain();
    // Everything is settled now: the next start reads nothing but this.
    this.checkpoint();
    await this.checkpoints.settled();
    this.log.close();
    // Nothing of this run is kept: a later open() reads the directory afresh.
    this.opening = undefined;
    this.checkpoints.forget();
    this.segments.clear();
    this.inFlight.clear();
    const { fsyncs, durableLines } = this.log.stats;
    this.settings.logger.info("journal closed", { fsyncs, durableLines });
  }

  /**
   * The upkeep the timer runs, run now (tests call it): drops expired segments, writes a checkpoint, and starts
   * rewriting finished segments small in the background. Resolves once the expired ones are gone; the rewrite it
   * started is awaited by the next call and by `close()`.
   */
  compact(): Promise<void> {
    this.compacting ??= this.dropExpiredSegments().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /**
   * Takes over what the previous run left (read by load-journal), then starts a fresh segment and the retention
   * timer. A checkpoint is written at once, so a start that had to read every segment is not repeated.
   */
  private async load(): Promise<JournalBacklog> {
    const { dir } = this.settings;
    const { now, segments, lastSeq, admitted, deliveries, stored } = await loadJournal(this.settings);
    this.deliveries = deliveries;
    this.stored = stored;
    for (const segment of segments) this.segments.set(segment.seq, segment);
    if (this.closed) return { unfinished: [], deliveries: [], stored: [] };
    // Always a fresh segment: the last one may end in a torn line.
    this.startSegment(lastSeq + 1, now);
    this.log.openFile(lastSeq + 1, segmentFile(dir, lastSeq + 1));
    const unfinished: UnfinishedRecord[] = [];
    for (const [id, { record, handed, handedRuns, seq }] of admitted) {
      const { t: _t, handed: _handed, handedRuns: _runs, ...rest } = record;
      unfinished.push({ record: rest, handed, handedRuns });
      const { request: _request, ...kept } = rest;
      // Read back whole; kept in memory (and in checkpoints, carried-forward lines) as the pipeline hands records
      // over: a large payload once.
      kept.events = compactEvents(rest.events);
      // A record whose segment is gone (carried forward while a checkpoint named the old one) belongs to the newest.
      const owner = this.segments.get(seq) ?? this.segments.get(lastSeq + 1)!;
      this.inFlight.set(id, { record: kept, seq: owner.seq, handed, handedRuns });
      owner.unfinished++;
    }
    // Oldest first, as admitted: a copy carried forward sits in a later file than records admitted after it.
    unfinished.sort((a, b) => a.record.at - b.record.at);
    this.checkpoint();
    const compactEveryMs = this.settings.compactEveryMs ?? Math.min(COMPACT_EVERY_MS, this.segmentMs);
    this.timer = setInterval(() => void this.compact(), compactEveryMs);
    this.timer.unref();
    // Expired segments go now; rewriting finished ones waits for the timer, so a start does not compete with it.
    this.compacting = this.dropExpiredSegments(false).finally(() => {
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
   */
  private checkpoint(): void {
    if (this.opening === undefined) return;
    const point = `${this.log.currentSeq}:${this.log.settledSize}:${this.inFlight.size}`;
    this.checkpoints.write(point, () => this.snapshot());
  }

  private snapshot(): Checkpoint {
    const now = this.settings.clock.now();
    return {
      v: 1,
      seq: this.log.currentSeq,
      offset: this.log.settledSize,
      segments: [...this.segments.values()].map(({ seq, newestAt, holdsDeliveries, compacted }) => ({
        seq,
        newestAt,
        holdsDeliveries,
        ...(compacted ? { compacted } : {}),
      })),
      unfinished: [...this.inFlight.values()].map(({ record, seq, handed, handedRuns }) =>
        handedRuns === undefined ? { seq, handed, record } : { seq, handed, handedRuns, record },
      ),
      deliveries: this.deliveries.since(now - this.settings.deliveryWindowMs),
      stored: this.stored.snapshot(),
    };
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
   * expiring segment is copied into the current one before the file goes. With `rewrite` (the timer's run, not
   * the start's), it then writes a checkpoint and starts rewriting finished segments small.
   */
  private async dropExpiredSegments(rewrite = true): Promise<void> {
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
      if (this.closed || segment.seq >= this.checkpoints.writtenSeq || segment.seq >= this.log.currentSeq)
        return;
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
      const line = encodeAdmitted({
        ...entry.record,
        ...(entry.handed ? { handed: true } : {}),
        ...(entry.handedRuns === undefined ? {} : { handedRuns: entry.handedRuns }),
      });
      await this.log.append(line, (seq) => {
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

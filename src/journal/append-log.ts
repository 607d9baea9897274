/** @module One append-only file with group commit: lines waiting on durability share one fsync, a failed batch is cut off again. */
import { closeSync, fdatasync, ftruncateSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { syncDirectory } from "./durable-fs.js";
import type { LinePieces } from "./line-format.js";

/** `batch`: lines that arrive together share one fsync; `always`: one fsync per line; `off`: written, never synced. */
export type FsyncPolicy = "batch" | "always" | "off";

/** The file operations the log uses; a test swaps in one that fails like a full disk. */
export interface JournalIo {
  openSync(file: string, flags: string, mode: number): number;
  writeSync(fd: number, data: Buffer): number;
  fdatasync(fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void;
  ftruncateSync(fd: number, length: number): void;
  closeSync(fd: number): void;
  /** Makes a new file's directory entry durable. */
  syncDirectory(dir: string): void;
}

export const nodeIo: JournalIo = {
  openSync: (file, flags, mode) => openSync(file, flags, mode),
  writeSync: (fd, data) => writeSync(fd, data),
  fdatasync: (fd, callback) => fdatasync(fd, callback),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  closeSync: (fd) => closeSync(fd),
  syncDirectory: (dir) => syncDirectory(dir),
};

interface Waiter {
  /** Told which file (its sequence number) the line went into. */
  resolve(seq: number): void;
  reject(error: Error): void;
  /** Called at once, in the same turn as the sync that made the line durable (before `resolve` reaches anyone). */
  durable?: ((seq: number) => void) | undefined;
}

interface Entry {
  text: string;
  /** A line given in pieces (a large body's bytes among them), written after the lines before it; `text` is empty. */
  pieces?: LinePieces;
  /** Present for a line whose caller waits until it is durable. */
  waiter?: Waiter;
}

/** The next file to write, when the current one should be closed (asked between batches). */
export type Rollover = (size: number) => { seq: number; file: string } | undefined;

/** Lines of a numbered file, in the order they reach it; moved to the next file between batches when asked. */
export class AppendLog {
  private fd: number | undefined;
  private seq = 0;
  /** Bytes of the file known to hold whole lines: where a failed batch is cut back to. */
  private goodSize = 0;
  /** A cut-back failed too: the next write starts on a fresh line so the torn one cannot swallow it. */
  private torn = false;
  private queue: Entry[] = [];
  private scheduled = false;
  private syncing = false;
  private drained: Array<() => void> = [];
  /** Lines written at once while a batch was being synced: re-written if that batch is cut off. */
  private writtenDuringSync: Buffer[] = [];
  /** Lines of the batch whose fsync is running. */
  private syncingLines = 0;
  /** Where the batch whose fsync is running starts. */
  private syncStart = 0;
  /** Counters for the bench and the status line: fsyncs issued, lines made durable. */
  readonly stats = { fsyncs: 0, durableLines: 0 };

  constructor(
    private readonly policy: FsyncPolicy,
    private readonly rollover: Rollover,
    private readonly io: JournalIo = nodeIo,
    /** Told how long each fsync took, in seconds (the metrics' latency histogram). */
    private readonly onSync?: (seconds: number) => void,
    /** Told after the log moved to a new file between batches. */
    private readonly onRolled?: (seq: number) => void,
  ) {}

  /** Bytes written to the current file so far. */
  get size(): number {
    return this.goodSize;
  }

  /**
   * Bytes of the current file whose lines are all settled: durable (or refused and cut off), none waiting on a sync.
   * A checkpoint may say "everything before here is accounted for" up to this point.
   */
  get settledSize(): number {
    return this.syncing ? this.syncStart : this.goodSize;
  }

  /** Lines queued or waiting on their fsync: the backlog a scrape reports. */
  get unsynced(): number {
    return this.queue.length + this.syncingLines;
  }

  /** The sequence number of the file being written. */
  get currentSeq(): number {
    return this.seq;
  }

  /** Starts writing `file` (created 0600, appended to); the previous file is closed first. */
  openFile(seq: number, file: string): void {
    // Opened before the old one is closed: a file that cannot be created leaves the log writing where it was.
    const fd = this.io.openSync(file, "a", 0o600);
    // Before any line in it is synced: a power cut must not lose the file's name with its acknowledged lines.
    this.io.syncDirectory(path.dirname(file));
    if (this.fd !== undefined) this.io.closeSync(this.fd);
    this.fd = fd;
    this.seq = seq;
    this.goodSize = 0;
    this.torn = false;
  }

  /** Resolves with the file the line went into once it is as durable as the policy says; rejects when it could not be written. */
  append(line: string | LinePieces, durable?: (seq: number) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject, durable };
      this.queue.push(
        typeof line === "string"
          ? { text: `${line}\n`, waiter }
          : { text: "", pieces: [...line, "\n"], waiter },
      );
      this.schedule();
    });
  }

  /** A line nobody waits for; it goes out with the next batch (a marker, a listing). */
  note(line: string): void {
    this.queue.push({ text: `${line}\n` });
    this.schedule();
  }

  /** Writes the line at once (no fsync): it reaches the file before anything the caller does next. */
  writeNow(line: string): void {
    const bytes = Buffer.from(`${line}\n`);
    this.writeBytes(bytes);
    if (this.syncing) this.writtenDuringSync.push(bytes);
  }

  /** Moves to the next file now if the log is idle and the owner says so (an idle journal's last file must expire too). */
  rollIfIdle(): void {
    if (this.syncing || this.scheduled || this.queue.length > 0) return;
    this.applyRollover();
  }

  /** Resolves when every queued line has been written (and synced, where the policy asks). */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && !this.syncing && !this.scheduled) return;
    await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  close(): void {
    if (this.fd === undefined) return;
    this.io.closeSync(this.fd);
    this.fd = undefined;
  }

  private schedule(): void {
    if (this.scheduled || this.syncing) return;
    this.scheduled = true;
    // End of this event-loop turn: every request answered in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Between batches only: no sync of the current file is running, and the lines before are all in it. */
  private applyRollover(): void {
    const next = this.rollover(this.goodSize);
    if (next === undefined) return;
    this.openFile(next.seq, next.file);
    this.onRolled?.(next.seq);
  }

  /** Takes the lines of one batch: all of them, or (policy `always`) up to the first line someone waits on. */
  private takeBatch(): Entry[] {
    if (this.policy !== "always") {
      const batch = this.queue;
      this.queue = [];
      return batch;
    }
    const end = this.queue.findIndex((entry) => entry.waiter !== undefined);
    return this.queue.splice(0, end === -1 ? this.queue.length : end + 1);
  }

  private flush(): void {
    if (this.syncing) return;
    if (this.queue.length === 0) {
      this.settleDrained();
      return;
    }
    try {
      this.applyRollover();
    } catch {
      // The next file cannot be opened (a full disk): this batch goes to the current one, which may still take it.
    }
    const batch = this.takeBatch();
    const waiters = batch.flatMap((entry) => (entry.waiter ? [entry.waiter] : []));
    const start = this.goodSize;
    const seq = this.seq;
    try {
      for (const bytes of batchBytes(batch)) this.writeBytes(bytes);
    } catch (error) {
      this.cutBack(start);
      for (const waiter of waiters) waiter.reject(error as Error);
      this.continue();
      return;
    }
    if (this.policy === "off" || waiters.length === 0) {
      settle(waiters, seq);
      this.continue();
      return;
    }
    this.syncing = true;
    this.syncStart = start;
    this.syncingLines = batch.length;
    this.stats.fsyncs++;
    const syncStarted = performance.now();
    this.io.fdatasync(this.fd!, (error) => {
      this.onSync?.((performance.now() - syncStarted) / 1000);
      this.syncing = false;
      this.syncingLines = 0;
      const writtenMeanwhile = this.writtenDuringSync;
      this.writtenDuringSync = [];
      if (error) {
        // Not durable: the lines are cut off again, so a restart does not act on requests that were refused. Lines
        // written at once meanwhile belong to other, accepted records: they go back in.
        this.cutBack(start);
        for (const bytes of writtenMeanwhile) {
          try {
            this.writeBytes(bytes);
          } catch {
            // The file takes nothing now; the next start treats that record's turns as not handed over.
          }
        }
        for (const waiter of waiters) waiter.reject(error);
      } else {
        this.stats.durableLines += waiters.length;
        settle(waiters, seq);
      }
      // Lines that arrived during the sync form the next batch at once: they have waited one sync already.
      this.continue();
    });
  }

  private continue(): void {
    if (this.queue.length > 0) this.flush();
    else this.settleDrained();
  }

  private settleDrained(): void {
    const waiting = this.drained;
    this.drained = [];
    for (const resolve of waiting) resolve();
  }

  private writeBytes(data: Buffer): void {
    if (this.fd === undefined) throw new Error("the journal is not open");
    if (this.torn) {
      data = Buffer.concat([Buffer.from("\n"), data]);
    }
    let offset = 0;
    try {
      while (offset < data.length) offset += this.io.writeSync(this.fd, data.subarray(offset));
    } catch (error) {
      this.goodSize += offset;
      if (offset > 0) this.torn = true;
      throw error;
    }
    this.goodSize += data.length;
    this.torn = false;
  }

  /** Removes a failed batch's bytes; if even that fails, the next write starts a new line. */
  private cutBack(size: number): void {
    if (this.fd === undefined) return;
    try {
      this.io.ftruncateSync(this.fd, size);
      this.goodSize = size;
      this.torn = false;
    } catch {
      this.torn = true;
    }
  }
}

/** Tells each waiter its line is durable: every `durable` callback first, in this turn, then the promises. */
function settle(waiters: readonly Waiter[], seq: number): void {
  for (const waiter of waiters) waiter.durable?.(seq);
  for (const waiter of waiters) waiter.resolve(seq);
}

/** A piece of a line at least this large is written on its own; smaller ones are copied together into one write. */
const WRITE_ALONE_BYTES = 64 * 1024;

/**
 * A batch's bytes in order: its lines joined and encoded in one go, as before, unless a line comes in pieces; then
 * its large pieces are written as they are (a 30 MB body is not copied again) and the small ones together.
 */
function batchBytes(batch: readonly Entry[]): Buffer[] {
  if (!batch.some((entry) => entry.pieces !== undefined)) {
    return [Buffer.from(batch.map((entry) => entry.text).join(""))];
  }
  const out: Buffer[] = [];
  let small: Buffer[] = [];
  let text = "";
  const add = (bytes: Buffer) => {
    if (bytes.length < WRITE_ALONE_BYTES) return void small.push(bytes);
    if (small.length > 0) out.push(Buffer.concat(small));
    small = [];
    out.push(bytes);
  };
  for (const entry of batch) {
    for (const piece of entry.pieces ?? [entry.text]) {
      if (typeof piece === "string") text += piece;
      else {
        if (text !== "") add(Buffer.from(text));
        text = "";
        add(piece);
      }
    }
  }
  if (text !== "") add(Buffer.from(text));
  if (small.length > 0) out.push(Buffer.concat(small));
  return out;
}

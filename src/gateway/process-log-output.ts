/** @module The log's way out to stdout or stderr: lines gathered into chunks, each written whole and in order, what is left written at exit, and a stalled reader never blocking the gateway. */

import { writeSync } from "node:fs";

/**
 * Lines are written in chunks of at least this many bytes (or after FLUSH_AFTER_MS): one syscall for many lines
 * under load, instead of one per line.
 */
const MIN_CHUNK_BYTES = 2048;
/**
 * And at most this many (Linux's PIPE_BUF): a write that size reaches a pipe whole, so lines written meanwhile by
 * someone else on the same stdout (the banner, a transform's console.log) never land inside a chunk.
 */
const MAX_CHUNK_BYTES = 4096;
/** How long a line may wait in the buffer when little is being logged. */
const FLUSH_AFTER_MS = 100;
/** How soon to try again when the reader has not kept up (the pipe is full). */
const RETRY_AFTER_MS = 20;
/** Lines beyond this much unwritten output (a stalled reader) are dropped rather than held in memory. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** At exit the loop is gone: a full pipe is waited for this long at most, then what is left is dropped. */
const EXIT_WAIT_MS = 2000;

export interface ProcessLogOutput {
  write(line: string): void;
  /** Resolves once every line written so far reached the fd (or was given up: the reader went away). */
  flush(): Promise<void>;
}

const outputs = new Map<number, ProcessLogOutput>();
const atExit: Array<() => void> = [];

/**
 * One output per fd, shared by every logger on it so their lines keep their order. Writes are synchronous and
 * non-blocking (Node puts a piped stdout in non-blocking mode): nothing is ever in flight in a thread, so the
 * exit handler can write out the rest without racing a write that has not landed yet.
 */
export function processLogOutput(fd: number): ProcessLogOutput {
  let output = outputs.get(fd);
  if (output === undefined) {
    if (outputs.size === 0) process.on("exit", () => drainAll());
    output = createOutput(fd);
    outputs.set(fd, output);
  }
  return output;
}

function createOutput(fd: number): ProcessLogOutput {
  const output = new FdOutput(fd);
  atExit.push(() => output.drainAtExit());
  return output;
}

/** Lines waiting for one fd, in order, and the chunks they go out in. */
class FdOutput implements ProcessLogOutput {
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The unwritten end of a chunk the fd took only part of; it goes before anything pending. */
  private carry: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private gone = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly fd: number) {}

  write(line: string): void {
    if (this.gone) return;
    if (this.pendingBytes + line.length > MAX_BUFFERED_BYTES) return;
    this.pending.push(line);
    this.pendingBytes += Buffer.byteLength(line);
    // A full pipe has a retry armed already; otherwise a chunk's worth goes out now, and a lone line soon.
    if (this.carry === undefined && this.pendingBytes >= MIN_CHUNK_BYTES) {
      if (!this.writeOut()) this.arm(RETRY_AFTER_MS);
    } else {
      this.arm(FLUSH_AFTER_MS);
    }
  }

  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writeOut()) return Promise.resolve();
    this.arm(RETRY_AFTER_MS);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** At exit: writes what is left, waiting out a full pipe for EXIT_WAIT_MS at most. */
  drainAtExit(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const deadline = Date.now() + EXIT_WAIT_MS;
    while (!this.writeOut() && Date.now() < deadline) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }

  private giveUp(error: NodeJS.ErrnoException): void {
    this.gone = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.carry = undefined;
    // A reader that went away (EPIPE) is no news; anything else is said once, and logging goes on silently: an
    // unwritable log must not take the gateway down.
    if (error.code !== "EPIPE") {
      try {
        writeSync(2, `hooks: cannot write the log to fd ${this.fd} (${error.code ?? error.message})\n`);
      } catch {
        // stderr is gone too.
      }
    }
  }

  private nextChunk(): Buffer {
    if (this.carry !== undefined) return this.carry;
    const { pending } = this;
    let bytes = 0;
    let count = 0;
    while (count < pending.length) {
      const size = Buffer.byteLength(pending[count]!);
      if (count > 0 && bytes + size > MAX_CHUNK_BYTES) break;
      bytes += size;
      count++;
    }
    const chunk = Buffer.from(count === pending.length ? pending.join("") : pending.slice(0, count).join(""));
    this.pending = count === pending.length ? [] : pending.slice(count);
    this.pendingBytes -= chunk.length;
    return chunk;
  }

  /** Writes until nothing is left or the fd is full; true when nothing is left. */
  private writeOut(): boolean {
    while (!this.gone && (this.carry !== undefined || this.pending.length > 0)) {
      const chunk = this.nextChunk();
      try {
        const written = writeSync(this.fd, chunk);
        this.carry = written < chunk.length ? chunk.subarray(written) : undefined;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          this.carry = chunk;
          return false;
        }
        this.giveUp(error as NodeJS.ErrnoException);
      }
    }
    return true;
  }

  private settle(): void {
    this.timer = undefined;
    if (this.writeOut()) {
      const resolved = this.waiters;
      this.waiters = [];
      for (const resolve of resolved) resolve();
    } else {
      this.arm(RETRY_AFTER_MS);
    }
  }

  private arm(delay: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => this.settle(), delay);
    this.timer.unref();
  }
}

function drainAll(): void {
  for (const drain of atExit) drain();
}

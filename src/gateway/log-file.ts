/** @module The gateway's optional log file: the JSON log lines, rotated by size, with `keep` old files beside it. */
import path from "node:path";
import { createStream } from "rotating-file-stream";
import { DEFAULT_LOG_KEEP, DEFAULT_LOG_MAX_SIZE_MB, type LogConfig } from "./gateway-config.js";

export interface LogFileOptions {
  /** Absolute path of the file being written; rotated files are `<path>.1` (newest) … `<path>.<keep>`. */
  path: string;
  maxBytes: number;
  keep: number;
}

export interface LogFileDestination {
  write(line: string): void;
  /** Resolves once every line written so far is in the file. */
  flush(): Promise<void>;
  /** Flushes and closes the file; lines written after are dropped. */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;
/** Lines beyond this much unwritten output (a stalled disk) are dropped rather than held in memory. */
const MAX_BUFFERED_BYTES = 8 * MIB;

/** Where the log file goes: `--log-file` (relative to the working directory) wins over `log.file` (relative to the config). */
export function resolveLogFile(
  log: LogConfig | undefined,
  configDir: string,
  flag?: string,
  cwd: string = process.cwd(),
): LogFileOptions | undefined {
  const file = flag !== undefined ? path.resolve(cwd, flag) : log?.file && path.resolve(configDir, log.file);
  if (!file) return undefined;
  return {
    path: file,
    maxBytes: (log?.maxSizeMb ?? DEFAULT_LOG_MAX_SIZE_MB) * MIB,
    keep: log?.keep ?? DEFAULT_LOG_KEEP,
  };
}

/**
 * rotating-file-stream rather than pino-roll: it is a plain Writable in this thread (pino-roll is built to run as
 * a pino transport in a worker thread, and numbers the live file too), it has no dependencies, and its classic
 * `rotate: N` mode is exactly "rename to .1, .2, … and keep N", so the live file keeps its name for `tail -f`.
 *
 * It writes each chunk with its own call, so the lines of one event-loop turn are joined into one chunk (at most
 * a sixteenth of the size limit, so a file ends at most that much past it: a chunk is never split between files).
 */
export function createLogFileDestination(options: LogFileOptions): LogFileDestination {
  const stream = createStream(options.path, {
    size: `${options.maxBytes}B`,
    rotate: options.keep,
    mode: 0o600,
  });
  const chunkBytes = Math.max(1024, Math.min(64 * 1024, Math.floor(options.maxBytes / 16)));
  let pending = "";
  let scheduled: NodeJS.Immediate | undefined;
  let written: Promise<void> = Promise.resolve();
  let broken = false;
  let closed = false;

  // After an error the stream is closed for good; said once, and logging to stdout goes on.
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (broken) return;
    broken = true;
    process.stderr.write(
      `hooks: cannot write the log file ${options.path} (${error.code ?? error.message})\n`,
    );
  });

  const writeOut = () => {
    if (scheduled !== undefined) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    if (pending === "" || broken) return;
    const chunk = pending;
    pending = "";
    if (stream.writableLength > MAX_BUFFERED_BYTES) return;
    written = new Promise((resolve) => stream.write(chunk, () => resolve()));
  };

  const flush = async () => {
    writeOut();
    await written;
  };

  return {
    write(line) {
      if (closed || broken) return;
      pending += line;
      if (pending.length >= chunkBytes) writeOut();
      else scheduled ??= setImmediate(writeOut);
    },
    flush,
    async close() {
      if (closed) return;
      await flush();
      closed = true;
      if (broken) return;
      await new Promise<void>((resolve) => stream.end(() => resolve()));
    },
  };
}

/** @module JSON-lines files of the state directory and the event record: whole lines only, write errors reported and survived. */
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import type { HostLogger } from "../host/contract.js";

/** Told when a write fails: the file and the error (its code says why), never what was being written. */
export type WriteErrorHandler = (error: NodeJS.ErrnoException, file: string) => void;

export interface JsonlWriter {
  readonly file: string;
  /** Adds one line; whole lines only ever reach the file, so a reader never sees half a record. */
  append(record: unknown): void;
  /** Adds a record already serialised as one line of JSON (no newline). */
  appendJson(json: string): void;
  /** Writes pending lines now; false when they could not be written (the error was reported, the lines dropped). */
  flush(): boolean;
  /** Writes pending lines, then `bytes` as they are (whole lines, already encoded); false when `bytes` failed. */
  appendBytes(bytes: Buffer): boolean;
  /** Writes pending lines, then empties the file; false when it could not be emptied. */
  truncate(): boolean;
  close(): void;
}

export interface JsonlWriterOptions {
  /**
   * `line`: each append is written before it returns (the event record, read while the gateway runs).
   * `turn` (default): lines appended during one event-loop turn go out in one write at the end of the turn;
   * under load that is one syscall for many records instead of one each.
   */
  flush?: "line" | "turn";
  /** Default: one line on stderr. A failing file never throws into the caller: the gateway keeps serving. */
  onError?: WriteErrorHandler;
}

/** The default report, for writers nobody gave a handler: the process has no logger to hand. */
export const reportOnStderr: WriteErrorHandler = (error, file) => {
  process.stderr.write(`hooks gateway: cannot write ${file} (${error.code ?? error.message})\n`);
};

/** The gateway's report of a failed write (state files, the record): an error line with the file and the code. */
export function logWriteError(logger: Pick<HostLogger, "error">): WriteErrorHandler {
  return (error, file) =>
    logger.error("write failed; the gateway keeps running without those lines", {
      file,
      code: error.code ?? "unknown",
    });
}

/** Writes all of `data` (a write may take only part of it) at the end of the file. */
function writeAll(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset);
}

/** Opens lazily in append mode. The turn's buffer belongs to this writer alone and goes with it on close. */
export function createJsonlWriter(file: string, options: JsonlWriterOptions = {}): JsonlWriter {
  const onError = options.onError ?? reportOnStderr;
  let fd: number | undefined;
  let pending = "";
  let scheduled: NodeJS.Immediate | undefined;
  // The code of the failure last reported: a full disk is said once, not once per turn, until a write succeeds.
  let failing: string | undefined;

  const fail = (error: unknown): false => {
    const errno = error as NodeJS.ErrnoException;
    const code = errno.code ?? errno.message;
    if (code !== failing) {
      failing = code;
      onError(errno, file);
    }
    return false;
  };

  const open = (): number => {
    if (fd === undefined) {
      mkdirSync(path.dirname(file), { recursive: true });
      fd = openSync(file, "a");
    }
    return fd;
  };

  const write = (data: Buffer): boolean => {
    try {
      writeAll(open(), data);
      failing = undefined;
      return true;
    } catch (error) {
      return fail(error);
    }
  };

  const flush = (): boolean => {
    if (scheduled !== undefined) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    if (pending === "") return true;
    const text = pending;
    pending = "";
    return write(Buffer.from(text));
  };

  const appendJson = (json: string) => {
    const line = `${json}\n`;
    if (options.flush === "line") {
      write(Buffer.from(line));
      return;
    }
    pending += line;
    scheduled ??= setImmediate(flush);
  };

  return {
    file,
    append: (record) => appendJson(JSON.stringify(record)),
    appendJson,
    flush,
    appendBytes(bytes) {
      flush();
      return bytes.length === 0 || write(bytes);
    },
    truncate() {
      flush();
      // Appends go to the end whatever the offset, so the open descriptor stays usable.
      try {
        ftruncateSync(open(), 0);
        return true;
      } catch (error) {
        return fail(error);
      }
    },
    close() {
      flush();
      if (fd === undefined) return;
      try {
        closeSync(fd);
      } catch (error) {
        fail(error);
      }
      fd = undefined;
    },
  };
}

/** Records as JSON-lines text, one line each. */
export function toJsonLines(records: readonly unknown[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join("");
}

/** Every parseable line of a JSON-lines file; a missing file is empty and a torn last line is skipped. */
export function readJsonl<T = unknown>(file: string): T[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return parseJsonl<T>(text);
}

/** Every parseable line of JSON-lines text; a torn line is skipped. */
export function parseJsonl<T = unknown>(text: string): T[] {
  const out: T[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A line cut by a crash mid-write; the rest of the file is still good.
    }
  }
  return out;
}

/** Replaces a file's whole content atomically (temp file, then rename), for state that shrinks. */
export function writeFileAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

export function readJsonFile<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** @module JSON-lines files of the state directory and the event record: one write per line, readable while open. */
import {
  appendFileSync,
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
import { createTickBuffer } from "./tick-buffer.js";

export interface JsonlWriter {
  readonly file: string;
  /** Adds one line; whole lines only ever reach the file, so a reader never sees half a record. */
  append(record: unknown): void;
  /** Adds a record already serialised as one line of JSON (no newline). */
  appendJson(json: string): void;
  /** Writes pending lines now. */
  flush(): void;
  /** Writes pending lines, then `bytes` as they are (whole lines, already encoded). */
  appendBytes(bytes: Buffer): void;
  /** Writes pending lines, then empties the file. */
  truncate(): void;
  close(): void;
}

export interface JsonlWriterOptions {
  /**
   * `line`: each append is written before it returns (the event record, read while the gateway runs).
   * `tick` (default): lines appended during one event-loop turn go out in one write at the end of the turn;
   * under load that is one syscall for many records instead of one each.
   */
  flush?: "line" | "tick";
}

/** Opens lazily in append mode. */
export function createJsonlWriter(file: string, options: JsonlWriterOptions = {}): JsonlWriter {
  let fd: number | undefined;
  const open = (): number => {
    if (fd === undefined) {
      mkdirSync(path.dirname(file), { recursive: true });
      fd = openSync(file, "a");
    }
    return fd;
  };
  const writeText = (text: string) => {
    writeSync(open(), text);
  };
  const buffer = options.flush === "line" ? undefined : createTickBuffer(writeText);
  const appendJson = (json: string) => {
    const line = `${json}\n`;
    if (buffer) buffer.push(line);
    else writeText(line);
  };
  return {
    file,
    append: (record) => appendJson(JSON.stringify(record)),
    appendJson,
    flush() {
      buffer?.flush();
    },
    appendBytes(bytes) {
      buffer?.flush();
      if (bytes.length > 0) writeSync(open(), bytes);
    },
    truncate() {
      buffer?.flush();
      // Appends go to the end whatever the offset, so the open descriptor stays usable.
      ftruncateSync(open(), 0);
    },
    close() {
      buffer?.flush();
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
    },
  };
}

/** Records as JSON-lines text, one line each. */
export function toJsonLines(records: readonly unknown[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join("");
}

/** Appends records in one write, opening and closing the file: for files written now and then. */
export function appendJsonl(file: string, records: readonly unknown[]): void {
  if (records.length === 0) return;
  appendFileSync(file, toJsonLines(records));
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

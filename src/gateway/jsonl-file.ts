/** @module The event record's JSON-lines file: one whole line per write, write errors reported and survived. */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { reportOncePerFailure, reportOnStderr, type WriteErrorHandler } from "./write-errors.js";

export interface JsonlWriter {
  readonly file: string;
  /**
   * Writes one line before it returns, in a single write: people and tests read the file while the gateway
   * runs, and a reader never sees half a record.
   */
  append(record: unknown): void;
  close(): void;
}

export interface JsonlWriterOptions {
  /** Default: one line on stderr. A failing file never throws into the caller: the gateway keeps serving. */
  onError?: WriteErrorHandler;
}

/** Writes all of `data` (a write may take only part of it) at the end of the file. */
function writeAll(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset);
}

/** Opens lazily in append mode. A full disk is said once, not once per line, until a write succeeds. */
export function createJsonlWriter(file: string, options: JsonlWriterOptions = {}): JsonlWriter {
  const report = reportOncePerFailure(options.onError ?? reportOnStderr);
  let fd: number | undefined;

  const open = (): number => {
    if (fd === undefined) {
      mkdirSync(path.dirname(file), { recursive: true });
      fd = openSync(file, "a");
    }
    return fd;
  };

  return {
    file,
    append(record) {
      try {
        writeAll(open(), Buffer.from(`${JSON.stringify(record)}\n`));
        report.succeeded();
      } catch (error) {
        report.failed(error, file);
      }
    },
    close() {
      if (fd === undefined) return;
      try {
        closeSync(fd);
      } catch (error) {
        report.failed(error, file);
      }
      fd = undefined;
    },
  };
}

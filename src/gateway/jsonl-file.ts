/** @module The event record's JSON-lines file: one whole line per write, write errors reported and survived. */
import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, writeSync } from "node:fs";
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

/**
 * The record holds payloads, as the journal does, so it is the owner's only: 0600, in a directory made 0700 when
 * this creates it. A file that was there already is made 0600 too; a device or a pipe (`/dev/stdout`) is left as is.
 */
function openPrivate(file: string): number {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, "a", 0o600);
  try {
    if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** Opens lazily in append mode. A full disk is said once, not once per line, until a write succeeds. */
export function createJsonlWriter(file: string, options: JsonlWriterOptions = {}): JsonlWriter {
  const report = reportOncePerFailure(options.onError ?? reportOnStderr);
  let fd: number | undefined;

  const open = (): number => {
    fd ??= openPrivate(file);
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

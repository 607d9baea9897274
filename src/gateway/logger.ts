/** @module The gateway's structured logger (pino): JSON lines, or readable lines on a TTY, and optionally a rotated file; the plugin logs through it too. */

import pino, { type DestinationStream } from "pino";
import pinoPretty from "pino-pretty";
import type { HostLogger } from "../host/contract.js";
import { createLogFileDestination, type LogFileOptions } from "./log-file.js";
import { processLogOutput } from "./process-log-output.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "text" | "json";

const LEVELS: ReadonlySet<string> = new Set<LogLevel>(["debug", "info", "warn", "error"]);

/** One line per handled request; built from the plugin's `hooks:request` event, so it holds no payload or header. */
export interface RequestLogFields {
  method: string;
  hook: string;
  status: number;
  durationMs: number;
  requestId: string;
  mappingId?: string | undefined;
}

export interface GatewayLogger extends HostLogger {
  request(fields: RequestLogFields): void;
  /** Writes out what is buffered; resolves once it reached the output. Exit flushes too, so calling it is optional. */
  flush(): Promise<void>;
  /** Flushes and closes the log file, if any; later lines still go to the output. */
  close(): Promise<void>;
}

export interface LoggerOptions {
  out?: NodeJS.WritableStream & { isTTY?: boolean };
  format?: LogFormat;
  level?: LogLevel;
  /** Also write the JSON lines to this file, rotated by size (whatever the output's format). */
  file?: LogFileOptions;
}

/** The keys every line leads with; a field of the same name must not replace them when the line is read. */
const RESERVED_KEYS = ["time", "level", "msg"] as const;

/**
 * pino writes the object's keys after `level` and `time` (and before `msg`), and a JSON reader keeps the last of two
 * equal keys: a field named `level` would forge the line's level. Such a field keeps its value under `field.<name>`.
 */
function guardReservedKeys(fields: Record<string, unknown>): Record<string, unknown> {
  if (!RESERVED_KEYS.some((key) => Object.hasOwn(fields, key))) return fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[(RESERVED_KEYS as readonly string[]).includes(key) ? `field.${key}` : key] = value;
  }
  return out;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && LEVELS.has(value);
}

function textValue(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

/** The readable line's message: what a person scans for first, then the fields as `key=value`. */
function readableMessage(log: Record<string, unknown>, messageKey: string): string {
  const { time: _time, level: _level, [messageKey]: message, ...fields } = log;
  let head = String(message);
  if (message === "request" && typeof fields.method === "string") {
    const { method, hook, status, durationMs, ...rest } = fields;
    head = `${method} ${hook || "/"} ${status} ${durationMs}ms`;
    return head + textFields(rest);
  }
  return head + textFields(fields);
}

function textFields(fields: Record<string, unknown>): string {
  let out = "";
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out += ` ${key}=${textValue(value)}`;
  }
  return out;
}

/** pino-pretty as a plain synchronous function over each line: no worker thread, no stream plumbing. */
function readableDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): DestinationStream {
  const prettify = pinoPretty.prettyFactory({
    colorize: out.isTTY === true && pinoPretty.isColorSupported,
    translateTime: "SYS:HH:MM:ss.l",
    hideObject: true,
    messageFormat: readableMessage,
  });
  return { write: (line: string) => void out.write(prettify(line)) };
}

export function createGatewayLogger(options: LoggerOptions = {}): GatewayLogger {
  const out = options.out ?? process.stdout;
  const format = options.format ?? (out.isTTY ? "text" : "json");
  const processFd = out === process.stdout ? 1 : out === process.stderr ? 2 : undefined;
  const buffered =
    format === "json" && processFd !== undefined && !out.isTTY ? processLogOutput(processFd) : undefined;
  const output: DestinationStream =
    format === "text"
      ? readableDestination(out)
      : (buffered ?? { write: (line: string) => void out.write(line) });
  const file = options.file ? createLogFileDestination(options.file) : undefined;
  // The file gets the very line the output gets (same fields, same guard on reserved keys), always as JSON.
  const destination: DestinationStream = file
    ? {
        write(line: string) {
          output.write(line);
          file.write(line);
        },
      }
    : output;

  const logger = pino(
    {
      level: options.level ?? "info",
      // No pid or hostname on every line: one gateway per process, and the lines go to its own log.
      base: null,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: guardReservedKeys,
      },
    },
    destination,
  );

  return {
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
    request(fields) {
      // Debug, not info: a line per request cost ~10 µs of a /wake's CPU (bench/PROFILE.md), and the journal already
      // records every request. A 5xx is an error the operator must see.
      if (fields.status >= 500) logger.error(fields, "request");
      else logger.debug(fields, "request");
    },
    flush: async () => {
      await Promise.all([buffered?.flush(), file?.flush()]);
    },
    close: async () => {
      await Promise.all([buffered?.flush(), file?.close()]);
    },
  };
}

/** A logger that drops everything, for in-process uses that want quiet (benchmarks, tests). */
export const silentGatewayLogger: GatewayLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  request() {},
  flush: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

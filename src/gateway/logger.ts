/** @module The gateway's structured logger: human lines on a TTY, JSON lines otherwise; the plugin logs through it too. */

import { isoNow } from "../iso-clock.js";
import type { HostLogger, LogFields } from "../host/contract.js";
import { createTickBuffer } from "./tick-buffer.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "text" | "json";

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

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
}

export interface LoggerOptions {
  out?: NodeJS.WritableStream & { isTTY?: boolean };
  format?: LogFormat;
  level?: LogLevel;
  now?: () => Date;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && value in LEVEL_RANK;
}

function textValue(value: string | number | boolean): string {
  const text = String(value);
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

function textFields(fields: LogFields | undefined): string {
  if (!fields) return "";
  let out = "";
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out += ` ${key}=${textValue(value)}`;
  }
  return out;
}

const quote = JSON.stringify;
const INTEGER_KEY = /^(?:0|[1-9]\d*)$/;

/**
 * `JSON.stringify({ time, level, msg, ...fields })`, written out field by field: building that object for
 * every line was a measurable share of a request. A field named like a leading key takes the generic path,
 * which keeps the spread's meaning (the field's value wins, in the leading key's place).
 */
function jsonLine(time: string, level: LogLevel, message: string, fields: object | undefined): string {
  let line = `{"time":"${time}","level":"${level}","msg":${quote(message)}`;
  if (fields) {
    for (const key of Object.keys(fields)) {
      // Leading names and integer-like keys (which JSON.stringify orders first) take the generic path.
      if (key === "time" || key === "level" || key === "msg" || INTEGER_KEY.test(key)) {
        return `${JSON.stringify({ time, level, msg: message, ...fields })}\n`;
      }
      const value = quote((fields as Record<string, unknown>)[key]);
      // undefined, a function or a symbol: JSON.stringify leaves the key out.
      if (value === undefined) continue;
      line += `,${quote(key)}:${value}`;
    }
  }
  return `${line}}\n`;
}

export function createGatewayLogger(options: LoggerOptions = {}): GatewayLogger {
  const out = options.out ?? process.stdout;
  const format = options.format ?? (out.isTTY ? "text" : "json");
  const threshold = LEVEL_RANK[options.level ?? "info"];
  const isoTime = options.now ? () => options.now!().toISOString() : isoNow;
  // Process output gets one write per event-loop turn (each write to a pipe is a synchronous syscall on Linux);
  // any other stream, a test's for instance, gets each line as it is logged.
  const lines =
    out === process.stdout || out === process.stderr
      ? createTickBuffer((text) => out.write(text), { last: true })
      : { push: (text: string) => void out.write(text) };

  const write = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (LEVEL_RANK[level] < threshold) return;
    const time = isoTime();
    if (format === "json") {
      lines.push(jsonLine(time, level, message, fields));
    } else {
      lines.push(`${time.slice(11, 23)} ${level.padEnd(5)} ${message}${textFields(fields)}\n`);
    }
  };

  return {
    debug: (message, fields) => write("debug", message, fields),
    info: (message, fields) => write("info", message, fields),
    warn: (message, fields) => write("warn", message, fields),
    error: (message, fields) => write("error", message, fields),
    request(fields) {
      const level: LogLevel = fields.status >= 500 ? "error" : "info";
      if (format === "json") {
        if (LEVEL_RANK[level] >= threshold) lines.push(jsonLine(isoTime(), level, "request", fields));
        return;
      }
      // The readable form leads with what a person scans for: method, hook, status, time.
      const { method, hook, status, durationMs, ...rest } = fields;
      write(level, `${method} ${hook || "/"} ${status} ${durationMs}ms`, rest);
    },
  };
}

/** A logger that drops everything, for in-process uses that want quiet (benchmarks). */
export const silentGatewayLogger: GatewayLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  request() {},
};

/** @module The plugin's logger on top of OpenClaw's message-only one: fields become `key=value` after the message. */
import type { HostLogger, LogFields } from "../index.js";
import type { OpenClawLogger } from "./openclaw-api.js";

/** Values are quoted only when they need it, so a line stays readable and one value cannot pose as two. */
function formatValue(value: string | number | boolean): string {
  const text = String(value);
  return /^[\w.:/@+-]+$/.test(text) ? text : JSON.stringify(text);
}

export function formatLine(message: string, fields?: LogFields): string {
  if (!fields) return message;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) parts.push(`${key}=${formatValue(value)}`);
  }
  return parts.length === 0 ? message : `${message} (${parts.join(" ")})`;
}

/**
 * The plugin never puts a token, secret, credential header or payload in a message or a field (its own tests hold
 * it to that), so the shim adds nothing that could carry one: it only formats what it is given.
 */
export function openClawLogger(logger: OpenClawLogger): HostLogger {
  return {
    debug: (message, fields) => logger.debug?.(formatLine(message, fields)),
    info: (message, fields) => logger.info(formatLine(message, fields)),
    warn: (message, fields) => logger.warn(formatLine(message, fields)),
    error: (message, fields) => logger.error(formatLine(message, fields)),
  };
}

/** @module The plugin's logger on top of OpenClaw's message-only one: fields become `key=value` after the message. */
import type { HostLogger, LogFields } from "../index.js";
import { inOpenClawKeys } from "./gateway-config.js";
import type { OpenClawLogger } from "./openclaw-api.js";

/** Values are quoted only when they need it, so a line stays readable and one value cannot pose as two. */
function formatValue(value: string | number | boolean): string {
  const text = String(value);
  return /^[\w.:/@+-]+$/.test(text) ? text : JSON.stringify(text);
}

function formatLine(message: string, fields?: LogFields): string {
  if (!fields) return message;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) parts.push(`${key}=${formatValue(value)}`);
  }
  return parts.length === 0 ? message : `${message} (${parts.join(" ")})`;
}

/**
 * The plugin never puts a token, secret, credential header or payload in a message or a field (its own tests hold
 * it to that), so the shim adds nothing that could carry one: it formats what it is given and names the plugin's
 * keys as OpenClaw's config has them. A load that only describes the plugin (discovery, inspection) repeats what the
 * serving load said, so it logs at debug only.
 */
export function openClawLogger(logger: OpenClawLogger, options: { serving: boolean }): HostLogger {
  const line = (message: string, fields?: LogFields) => inOpenClawKeys(formatLine(message, fields));
  const debug = (message: string, fields?: LogFields) => logger.debug?.(line(message, fields));
  if (!options.serving) return { debug, info: debug, warn: debug, error: debug };
  return {
    debug,
    info: (message, fields) => logger.info(line(message, fields)),
    warn: (message, fields) => logger.warn(line(message, fields)),
    error: (message, fields) => logger.error(line(message, fields)),
  };
}

/** @module Redaction in one place: what the inspector shows of a stored request, and the last check that no configured secret leaves it. */
import {
  isCredentialQuery,
  REDACTED,
  redactCredentials,
  urlWithoutCredentials,
} from "../safety/credentials.js";
import type { InspectorDetail } from "./inspector-source.js";

/** Headers with every credential's value `[redacted]` (kept by name, so a reader sees one was sent). */
export function shownHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return redactCredentials(headers);
}

/** A stored URL's path and query, credential parameters removed, and the query as fields. */
export function shownUrl(url: string): { url: string; query: Record<string, string> } {
  // Appended to an origin, not resolved against one: a stored `//x/y` is a path, not a host.
  let parsed: URL;
  try {
    parsed = new URL(`http://stored.invalid${url.startsWith("/") ? "" : "/"}${url}`);
  } catch {
    return { url, query: {} };
  }
  const query: Record<string, string> = {};
  for (const [name, value] of parsed.searchParams) if (!isCredentialQuery(name)) query[name] = value;
  return { url: urlWithoutCredentials(parsed.pathname, parsed.searchParams), query };
}

/** The body as a person reads it: JSON parsed, a form as fields, text, or base64 for bytes that are not UTF-8. */
export function shownBody(
  contentType: string | undefined,
  text: string | undefined,
  base64: string | undefined,
): InspectorDetail["body"] {
  if (text === undefined) return base64 === undefined ? undefined : { kind: "base64", value: base64 };
  const type = contentType?.toLowerCase() ?? "";
  if (type.includes("json") || (type === "" && /^\s*[[{]/.test(text))) {
    try {
      return { kind: "json", value: JSON.parse(text) };
    } catch {
      return { kind: "text", value: text };
    }
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    // No prototype: a field named `constructor` or `__proto__` is a field like any other.
    const fields: Record<string, string | string[]> = Object.create(null);
    for (const [name, value] of new URLSearchParams(text)) {
      if (isCredentialQuery(name)) continue;
      const had = fields[name];
      fields[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
    }
    return { kind: "form", value: fields };
  }
  return { kind: "text", value: text };
}

/** Secrets shorter than this are not searched for: a 3-letter "secret" would blank out ordinary words. */
const MIN_SECRET = 6;

/**
 * The value with every configured secret (the hook token, signing secrets) replaced by `[redacted]` wherever it
 * occurs, as JSON text: a sender that put the token into a body or a header of its own does not get it shown.
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  if (value === undefined) return value;
  let text = JSON.stringify(value);
  let changed = false;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET) continue;
    // As JSON writes it: a secret with a quote or a backslash is escaped in the text.
    const written = JSON.stringify(secret).slice(1, -1);
    if (text.includes(written)) {
      text = text.replaceAll(written, REDACTED);
      changed = true;
    }
  }
  return changed ? (JSON.parse(text) as T) : value;
}

/** @module What every signature scheme shares: constant-time equality, the timestamp window, header and body-id reading, MACs over exact bytes. */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { HmacAlgorithm } from "../signature-scheme.js";

/**
 * Constant time for equal lengths. Unequal lengths answer at once: every caller compares against a
 * value whose length the algorithm fixes, so the length says nothing about the secret.
 */
export function equalBytes(a: Uint8Array | string, b: Uint8Array | string): boolean {
  const left = typeof a === "string" ? Buffer.from(a, "utf8") : a;
  const right = typeof b === "string" ? Buffer.from(b, "utf8") : b;
  return left.length === right.length && timingSafeEqual(left, right);
}

/** node:http gives repeated headers as an array; the sender's first one is the one it signed. An empty value is no value. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === "" ? undefined : first;
}

const UNIX_SECONDS = /^[0-9]{1,15}$/;

/**
 * Undefined when `raw` is inside the window, else the log reason: the timestamp's age (or how far the sender's
 * clock runs ahead) and the tolerance beside it, so neither is mistaken for the other.
 */
export function timestampProblem(
  raw: string,
  nowSeconds: number,
  toleranceSeconds: number,
): string | undefined {
  if (!UNIX_SECONDS.test(raw)) return "timestamp header malformed";
  const age = nowSeconds - Number(raw);
  if (age > toleranceSeconds) return `timestamp is ${age} s old; tolerance ${toleranceSeconds} s`;
  if (-age > toleranceSeconds) return `timestamp is ${-age} s in the future; tolerance ${toleranceSeconds} s`;
  return undefined;
}

/** Streaming the parts is the same MAC as over their concatenation, without copying the body. */
export function macOf(
  algorithm: HmacAlgorithm,
  key: string | Uint8Array,
  parts: ReadonlyArray<string | Uint8Array>,
): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Keys that fail at startup rather than as a mismatch on every delivery: empty, or pasted with a newline. */
export function plainSecretProblem(secret: string): string | undefined {
  if (secret === "") return "the secret is empty";
  if (secret.trim() !== secret) return "the secret has leading or trailing whitespace";
  return undefined;
}

/** A top-level string field of a parsed JSON body (Stripe's `id`, Slack's `event_id`). */
export function bodyString(body: unknown, field: string): string | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const value: unknown = Object.hasOwn(body, field) ? (body as Record<string, unknown>)[field] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Whether a Content-Type is a url-encoded form (Twilio and Slack send their fields so). */
export function isForm(contentType: string | undefined): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === "application/x-www-form-urlencoded";
}

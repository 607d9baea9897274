/** @module The one list of credentials a request may carry, and request views without them (templates, transforms, captures, logs). */
import type { IncomingHttpHeaders } from "node:http";
import { SIGNATURE_HEADERS } from "../verify/schemes/index.js";

/**
 * Headers that carry credentials. No template, transform, capture or log line ever sees them: a template that
 * names one renders empty, and the views below drop them.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "x-service-token",
  "x-forwarded-authorization",
  "cookie",
  "x-gitlab-token",
  "x-api-key",
  // Sender signatures, as each scheme names them: a signature over a body is as good as a token for that body.
  ...SIGNATURE_HEADERS,
]);

/** Query parameters that carry credentials (the deprecated `?token=`). */
export const CREDENTIAL_QUERY: ReadonlySet<string> = new Set(["token"]);

/** The list plus headers a config names as its own signature headers (the generic hmac scheme's). */
export function credentialHeadersWith(extra: Iterable<string>): ReadonlySet<string> {
  const all = new Set(CREDENTIAL_HEADERS);
  for (const name of extra) all.add(name.toLowerCase());
  return all;
}

/** Headers minus credentials, names lower-cased, repeated values joined with ", ". */
export function headersWithoutCredentials(
  headers: IncomingHttpHeaders,
  credentials: ReadonlySet<string> = CREDENTIAL_HEADERS,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    const lower = name.toLowerCase();
    if (value === undefined || credentials.has(lower)) continue;
    out[lower] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Query parameters (last value wins) minus credentials. */
export function queryWithoutCredentials(query: URLSearchParams | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (query) for (const [key, value] of query) if (!CREDENTIAL_QUERY.has(key)) out[key] = value;
  return out;
}

/** The request path and query with credential parameters removed. */
export function urlWithoutCredentials(pathname: string, query: URLSearchParams | undefined): string {
  if (!query) return pathname;
  const kept = new URLSearchParams(query);
  for (const name of CREDENTIAL_QUERY) kept.delete(name);
  const rest = kept.toString();
  return rest ? `${pathname}?${rest}` : pathname;
}

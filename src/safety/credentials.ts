/** @module The one list of credentials a request may carry, and request views without them (templates, transforms, captures, logs). */
import type { IncomingHttpHeaders } from "node:http";

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
]);

/** Query parameters that carry credentials (the deprecated `?token=`). */
export const CREDENTIAL_QUERY: ReadonlySet<string> = new Set(["token"]);

/** Headers minus credentials, names lower-cased, repeated values joined with ", ". */
export function headersWithoutCredentials(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    const lower = name.toLowerCase();
    if (value === undefined || CREDENTIAL_HEADERS.has(lower)) continue;
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

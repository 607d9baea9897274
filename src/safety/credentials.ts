/** @module Request views without credentials: what transforms, templates and captures may see of headers and query. */
import type { IncomingHttpHeaders } from "node:http";

/** Headers that carry credentials; none of them ever reaches a mapping or a capture. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "x-service-token",
  "cookie",
  "proxy-authorization",
]);

/** Headers minus credentials, repeated values joined with ", ". */
export function headersWithoutCredentials(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || CREDENTIAL_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Query parameters (last value wins) minus the deprecated `token`. */
export function queryWithoutToken(query: URLSearchParams | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (query) for (const [key, value] of query) if (key !== "token") out[key] = value;
  return out;
}

/** The request URL with any `token` parameter removed. */
export function urlWithoutToken(pathname: string, query: URLSearchParams | undefined): string {
  if (!query) return pathname;
  if (!query.has("token")) return `${pathname}?${query.toString()}`;
  const kept = new URLSearchParams(query);
  kept.delete("token");
  const rest = kept.toString();
  return rest ? `${pathname}?${rest}` : pathname;
}

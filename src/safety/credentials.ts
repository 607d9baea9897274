/** @module The one list of credentials a request may carry, and request views without them (templates, transforms, captures, logs). */
import type { IncomingHttpHeaders } from "node:http";
import { SIGNATURE_HEADERS } from "../verify/schemes/index.js";

/**
 * Headers that carry credentials whatever their name says. No template, transform, capture or log line ever sees
 * them, nor any header named like a credential (`isCredentialHeader`): a template that names one renders empty,
 * and the views below drop them.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "x-service-token",
  "x-openclaw-token",
  "x-forwarded-authorization",
  "cookie",
  "x-gitlab-token",
  "x-api-key",
  // Sender signatures, as each scheme names them: a signature over a body is as good as a token for that body.
  ...SIGNATURE_HEADERS,
]);

/**
 * Words that, in a header's name, say it carries a credential: a sender's or a proxy's own spelling of a token
 * (`X-Auth-Token`, `X-Original-Authorization`, `Proxy-Authorization`), an API key, a signature (`X-Shopify-Hmac-Sha256`),
 * a cookie or a session. Unknown headers are judged by their name, so a new sender's credential is hidden too.
 */
const CREDENTIAL_NAME = /auth|token|key|secret|signature|cookie|session|passw(or)?d|credential|hmac|jwt/;
/**
 * Words that say so only as a word of the name (between `-`, `_`, `.` or its ends): `X-Pass`, `X-Bearer`,
 * `X-Access`, `?sig=`, `?pwd=`; inside a longer word they say nothing (`X-Signal`, `X-Passenger-Count`, `Accept`).
 */
const CREDENTIAL_WORD = /(?:^|[-_.])(?:pass|pwd|passphrase|bearer|access|sig)(?=$|[-_.])/;
/** CORS preflight headers (`Access-Control-Request-Method`) name an access rule, not a credential. */
const CORS_PREFIX = "access-control-";
/**
 * Names the words above catch that carry no secret and that mappings read or route on: delivery ids (the
 * caller's `Idempotency-Key`, Twilio's `I-Twilio-Idempotency-Token`: recorded, so a replayed fixture keeps its id
 * and comes back a duplicate) and Bitbucket's `X-Event-Key` (the event's type, `repo:push`).
 */
const NOT_CREDENTIALS: ReadonlySet<string> = new Set([
  "idempotency-key",
  "x-event-key",
  "i-twilio-idempotency-token",
]);

/**
 * What the name patterns said of the names seen so far: a request's headers are judged one by one, and senders send
 * the same few names again and again. Bounded: a flood of made-up names empties it, it never grows past this.
 */
const NAMED_VERDICTS = new Map<string, boolean>();
const MAX_NAMED_VERDICTS = 1_024;

function namedLikeCredential(lower: string): boolean {
  let verdict = NAMED_VERDICTS.get(lower);
  if (verdict !== undefined) return verdict;
  verdict =
    !NOT_CREDENTIALS.has(lower) &&
    (CREDENTIAL_NAME.test(lower) || (CREDENTIAL_WORD.test(lower) && !lower.startsWith(CORS_PREFIX)));
  if (NAMED_VERDICTS.size >= MAX_NAMED_VERDICTS) NAMED_VERDICTS.clear();
  NAMED_VERDICTS.set(lower, verdict);
  return verdict;
}

/** A header (any case) that carries a credential: listed, or named like one. */
export function isCredentialHeader(name: string, listed: ReadonlySet<string> = CREDENTIAL_HEADERS): boolean {
  const lower = name.toLowerCase();
  return listed.has(lower) || namedLikeCredential(lower);
}

/** What is shown for a credential's value where headers are listed (a record written before it was hidden). */
export const REDACTED = "[redacted]";

/** Headers with every credential's value replaced by `[redacted]`, for display. */
export function redactCredentials(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = isCredentialHeader(name) ? REDACTED : value;
  return out;
}

/** Query parameters that carry credentials (the deprecated `?token=`, Meta's subscription `hub.verify_token`). */
export const CREDENTIAL_QUERY: ReadonlySet<string> = new Set(["token", "hub.verify_token"]);

/**
 * A query parameter (any case) that carries a credential: `?token=`, or named like one by the header rule
 * (`?api_key=`, `?access_token=`, `?signature=`, `?pass=`, `?sig=`, `?bearer=`): a sender that puts its secret in
 * the URL is not shown either.
 */
export function isCredentialQuery(name: string): boolean {
  return CREDENTIAL_QUERY.has(name) || isCredentialHeader(name.replaceAll("_", "-"), CREDENTIAL_QUERY);
}

/** The list plus headers a config names as its own signature headers (the generic hmac scheme's). */
export function credentialHeadersWith(extra: Iterable<string>): ReadonlySet<string> {
  const all = new Set(CREDENTIAL_HEADERS);
  for (const name of extra) all.add(name.toLowerCase());
  return all;
}

/** Headers minus credentials (listed or named like one), names lower-cased, repeated values joined with ", ". */
export function headersWithoutCredentials(
  headers: IncomingHttpHeaders,
  credentials: ReadonlySet<string> = CREDENTIAL_HEADERS,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    const lower = name.toLowerCase();
    if (value === undefined || isCredentialHeader(lower, credentials)) continue;
    out[lower] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Query parameters (last value wins) minus credentials. */
export function queryWithoutCredentials(query: URLSearchParams | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (query) for (const [key, value] of query) if (!isCredentialQuery(key)) out[key] = value;
  return out;
}

/** The request path and query with credential parameters removed. */
export function urlWithoutCredentials(pathname: string, query: URLSearchParams | undefined): string {
  if (!query) return pathname;
  const kept = new URLSearchParams(query);
  for (const name of new Set(query.keys())) if (isCredentialQuery(name)) kept.delete(name);
  const rest = kept.toString();
  return rest ? `${pathname}?${rest}` : pathname;
}

/** @module The listing of a request answered without admission (a refusal, a duplicate): small, bounded in bytes, and without a credential's or a secret's value. */
import type { IncomingHttpHeaders } from "node:http";
import type { Journal } from "../journal/journal.js";
import { isCredentialHeader, REDACTED } from "../safety/credentials.js";
import type { SecretRedactor } from "../safety/secret-redaction.js";
import { cutToJsonBytes, jsonBytes } from "./listed-text.js";

/**
 * Refusals a sender with accepted credentials gets again each time it repeats the request unchanged: listed as a
 * series, a few a minute, like a delivery's duplicates. Its other refusals (a bad body, a 404) are each listed.
 */
const REPEATED_REFUSALS: ReadonlySet<string> = new Set([
  "RATE_LIMITED",
  "TURNS_QUEUED_FULL",
  "INVALID_HANDSHAKE",
]);

/** A listed hook name, URL, method and error are cut to these many bytes of JSON: a caller chooses them. */
const MAX_LISTED_HOOK_BYTES = 200;
const MAX_LISTED_URL_BYTES = 2_048;
const MAX_LISTED_METHOD_BYTES = 32;
const MAX_LISTED_ERROR_BYTES = 300;
/**
 * The headers of a request refused before any credential was accepted, in all (as the JSON object written): anyone
 * can send one, so it is small. What an operator needs from a stranger's refusal is which headers it sent.
 */
const MAX_UNAUTHENTICATED_HEADER_BYTES = 1_536;
/** The same for a request whose credentials were accepted (a 404, a bad body, a duplicate). */
const MAX_HEADER_BYTES = 8 * 1024;
/** One header's name, and one value. */
const MAX_HEADER_NAME_BYTES = 128;
const MAX_HEADER_VALUE_BYTES = 1_024;
/** Quotes around a name and its value, the colon and the comma. */
const ENTRY_OVERHEAD = 6;

export interface AnsweredInput {
  key: { id: string; requestId?: string };
  at: number;
  hook: string;
  mappingId: string | undefined;
  status: number;
  /** The refusal's error code, or `DUPLICATE`. */
  code: string | undefined;
  /** Finer than the code (`TOKEN_WRONG`, `NO_MAPPING`); the code itself when there is nothing finer. */
  reason: string | undefined;
  /** The message the sender got. */
  error: string | undefined;
  client: string;
  method: string;
  /** Path and query without credential parameters. */
  url: string;
  headers: IncomingHttpHeaders;
  credentialHeaders: ReadonlySet<string>;
  /** Hides the config's token and signing secrets wherever the sender put them. */
  redact: SecretRedactor;
  /** Refused before any credential was accepted: counted against the client's and everyone's per-minute limits. */
  perClient: boolean;
  /** A duplicate's delivery key: its listings are limited per delivery (repeated refusals get a key of their own). */
  delivery: string | undefined;
}

/**
 * Lists a request answered without admission (a refusal, a duplicate): who sent it, how, and why it was refused;
 * nothing of its body, no credential's value, no occurrence of the token or a signing secret.
 */
export function listAnswered(journal: Journal, input: AnsweredInput): void {
  const { code, redact } = input;
  if (code === undefined) return;
  try {
    journal.answered(
      {
        ...input.key,
        at: input.at,
        // Secrets go before anything is cut: a cut through a secret would leave its start.
        hook: cutToJsonBytes(redact(input.hook), MAX_LISTED_HOOK_BYTES),
        mappingId: input.mappingId,
        status: input.status,
        code,
        reason: input.reason,
        error:
          input.error === undefined ? undefined : cutToJsonBytes(redact(input.error), MAX_LISTED_ERROR_BYTES),
        client: input.client,
        method: cutToJsonBytes(input.method, MAX_LISTED_METHOD_BYTES),
        url: cutToJsonBytes(redact(input.url), MAX_LISTED_URL_BYTES),
        headers: listedHeaders(
          input.headers,
          input.credentialHeaders,
          redact,
          input.perClient ? MAX_UNAUTHENTICATED_HEADER_BYTES : MAX_HEADER_BYTES,
        ),
      },
      { perClient: input.perClient, series: seriesOf(input) },
    );
  } catch {
    // A listing is best effort: the answer has gone, and a full disk is reported by the next admission.
  }
}

/**
 * The series a listing belongs to: a duplicate's delivery; a repeated refusal's code, owner (the mapping, else the
 * hook) and client address, encoded so that no owner's text can spell another's key.
 */
function seriesOf(input: AnsweredInput): string | undefined {
  if (input.delivery !== undefined) return input.delivery;
  if (input.perClient || input.code === undefined || !REPEATED_REFUSALS.has(input.code)) return undefined;
  const owner =
    input.mappingId === undefined
      ? `h:${encodeURIComponent(input.hook)}`
      : `m:${encodeURIComponent(input.mappingId)}`;
  return `refused:${input.code}:${owner}:${input.client}`;
}

/**
 * The headers as sent, each credential's value `[redacted]` (its name stays: "it sent an Authorization header" is
 * what an operator needs to see), within `budget` bytes as the JSON object written. Names come first: every name
 * that fits is kept (with a credential's `[redacted]`), and the values share what is left, in order, each cut short.
 */
function listedHeaders(
  headers: IncomingHttpHeaders,
  credentialHeaders: ReadonlySet<string>,
  redact: SecretRedactor,
  budget: number,
): Record<string, string> {
  const kept: Array<{ name: string; value: string | undefined }> = [];
  // The braces.
  let spent = 2;
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const credential = isCredentialHeader(name, credentialHeaders);
    const shown = cutToJsonBytes(redact(name), MAX_HEADER_NAME_BYTES);
    const bytes = jsonBytes(shown) + ENTRY_OVERHEAD + (credential ? REDACTED.length : 0);
    if (spent + bytes > budget) break;
    spent += bytes;
    kept.push({ name: shown, value: credential ? undefined : Array.isArray(raw) ? raw.join(", ") : raw });
  }
  const out: Record<string, string> = {};
  for (const { name, value } of kept) {
    if (value === undefined) {
      out[name] = REDACTED;
      continue;
    }
    const shown = cutToJsonBytes(redact(value), Math.min(MAX_HEADER_VALUE_BYTES, budget - spent));
    spent += jsonBytes(shown);
    out[name] = shown;
  }
  return out;
}

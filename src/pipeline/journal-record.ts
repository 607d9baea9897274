/** @module The journal stage: the record of an accepted request (made durable before the answer), and the listing of refused and duplicate ones. */
import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import type { ActionPlan } from "../actions/plan-action.js";
import { HookError } from "../errors.js";
import type { Ids } from "../ids.js";
import { compactBody, compactEvents } from "../journal/compact-line.js";
import type { AdmittedRecord, Journal } from "../journal/journal.js";
import { headersWithoutCredentials, isCredentialHeader, REDACTED } from "../safety/credentials.js";
import type { PipelineResponse } from "./request.js";

/** Seconds a sender is asked to wait before retrying a request the journal could not take. */
const JOURNAL_RETRY_AFTER_SECONDS = 5;
/** A listed hook name, URL, method and error are cut to these: a caller chooses them. */
const MAX_LISTED_HOOK_CHARS = 200;
const MAX_LISTED_URL_CHARS = 2_048;
const MAX_LISTED_METHOD_CHARS = 32;
const MAX_LISTED_ERROR_CHARS = 300;
/** A refused request's headers in all (names and values), and one value. */
const MAX_LISTED_HEADER_BYTES = 8 * 1024;
const MAX_LISTED_HEADER_CHARS = 1_024;

/**
 * The record's key in the journal. A request id we made is unique; a caller's X-Request-Id may be sent twice (a
 * retry after a lost answer), and two records under one key would finish each other, so those get a fresh key
 * and keep the caller's id beside it.
 */
export function journalKeyFor(
  headers: IncomingHttpHeaders,
  requestId: string,
  ids: Ids,
): { id: string; requestId?: string } {
  return headers["x-request-id"] === requestId ? { id: ids.uuid(), requestId } : { id: requestId };
}

export interface AdmissionInput {
  key: { id: string; requestId?: string };
  at: number;
  hook: string;
  mappingId: string | undefined;
  response: PipelineResponse;
  delivery: string | undefined;
  plans: readonly ActionPlan[];
  /** The request as it arrived, credentials removed; absent with `storePayloads: false`. */
  request?: StoredRequestInput | undefined;
  /** The journal key of the request this one replays. */
  replayOf: string | undefined;
}

export interface StoredRequestInput {
  method: string;
  /** Path and query without credential parameters. */
  url: string;
  /** Headers without credentials, when the pipeline already built them (mappings, captures). */
  view: Record<string, string> | undefined;
  headers: IncomingHttpHeaders;
  credentialHeaders: ReadonlySet<string>;
  raw: Buffer;
  /** The body decoded as UTF-8 once, by the parse stage. */
  text: string;
}

/** Records the accepted request; a journal that cannot is a 503 the sender retries, with nothing emitted. */
export async function admit(journal: Journal, input: AdmissionInput): Promise<void> {
  const { response } = input;
  const events = input.plans.flatMap((plan) => plan.events);
  // One literal with every field, always in this order: a spread or a field added later gives each record a
  // hidden class of its own, which made building it 10x slower (bench/PROFILE.md). Undefined fields are left out
  // of the line by JSON.stringify.
  const record: AdmittedRecord = {
    id: input.key.id,
    requestId: input.key.requestId,
    at: input.at,
    hook: input.hook,
    mappingId: input.mappingId,
    // The answer as a duplicate will get it again, after a restart too.
    response: { status: response.status, contentType: response.headers["Content-Type"], body: response.body },
    delivery: input.delivery,
    // A large payload is kept once, not as the body, the event's raw text and its wrapped copy: a 30 MB body
    // made a 90 MB line whose encoding held the event loop (bench/PROFILE.md, "Hostile load").
    events: compactEvents(events),
    runs: input.plans.flatMap((plan) => (plan.run ? [plan.run] : [])),
    request: input.request ? storedRequest(input.request, events) : undefined,
    replayOf: input.replayOf,
  };
  try {
    await journal.admit(record);
  } catch (error) {
    throw new HookError("UNAVAILABLE", "The request could not be recorded; retry later.", {
      headers: { "Retry-After": String(JOURNAL_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
}

/**
 * The request as `hooks journal replay` will need it: credentials removed, the body as text (or as what surrounds
 * an event's raw text, which the journal puts back when it reads the line) or base64.
 */
function storedRequest(
  input: StoredRequestInput,
  events: AdmittedRecord["events"],
): NonNullable<AdmittedRecord["request"]> {
  // A direct wake or agent request skipped building the view; its headers are taken now, the same way.
  const headers = input.view ?? headersWithoutCredentials(input.headers, input.credentialHeaders);
  const { method, url, raw } = input;
  // The compacted form is a shape only the journal's reader knows; the type describes the line as read back.
  return isUtf8(raw)
    ? ({ method, url, headers, ...compactBody(input.text, events) } as NonNullable<AdmittedRecord["request"]>)
    : { method, url, headers, bodyBase64: raw.toString("base64") };
}

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
  /** Refused before any credential was accepted: counted against the client's per-minute limit. */
  perClient: boolean;
}

/**
 * Lists a request answered without admission (a refusal, a duplicate): who sent it, how, and why it was refused;
 * nothing of its body, no credential's value.
 */
export function listAnswered(journal: Journal, input: AnsweredInput): void {
  const { code } = input;
  if (code === undefined) return;
  try {
    journal.answered(
      {
        ...input.key,
        at: input.at,
        hook: input.hook.slice(0, MAX_LISTED_HOOK_CHARS),
        mappingId: input.mappingId,
        status: input.status,
        code,
        reason: input.reason,
        error: input.error?.slice(0, MAX_LISTED_ERROR_CHARS),
        client: input.client,
        method: input.method.slice(0, MAX_LISTED_METHOD_CHARS),
        url: input.url.slice(0, MAX_LISTED_URL_CHARS),
        headers: listedHeaders(input.headers, input.credentialHeaders),
      },
      { perClient: input.perClient },
    );
  } catch {
    // A listing is best effort: the answer has gone, and a full disk is reported by the next admission.
  }
}

/**
 * The headers as sent, each credential's value `[redacted]` (its name stays: "it sent an Authorization header" is
 * what an operator needs to see), cut to MAX_LISTED_HEADER_BYTES in all so that a hostile header set cannot make a
 * large line.
 */
function listedHeaders(
  headers: IncomingHttpHeaders,
  credentialHeaders: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  let bytes = 0;
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const value = isCredentialHeader(name, credentialHeaders)
      ? REDACTED
      : (Array.isArray(raw) ? raw.join(", ") : raw).slice(0, MAX_LISTED_HEADER_CHARS);
    bytes += name.length + value.length;
    if (bytes > MAX_LISTED_HEADER_BYTES) break;
    out[name] = value;
  }
  return out;
}

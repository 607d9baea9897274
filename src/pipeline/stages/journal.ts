/** @module The journal stage: the admitted answer is built, and the request recorded with it, durable before anyone hears of it. */

import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import type { ActionPlan } from "../../actions/plan-action.js";
import type { Clock, Ids } from "../../clock.js";
import { HookError } from "../../errors.js";
import { bodyBytes, compactBody, compactEvents } from "../../journal/compact-line.js";
import type { AdmittedRecord, Journal } from "../../journal/journal.js";
import { headersWithoutCredentials, urlWithoutCredentials } from "../../safety/credentials.js";
import type { PipelineResponse } from "../request.js";
import { need, type RequestContext, type Stage } from "../stage.js";
import type { Resolution } from "./resolve.js";
import { fixedResponse, journalResponse, jsonResponse, noContentResponse } from "./respond.js";

export interface JournalStageDeps {
  journal: Journal;
  clock: Clock;
  /** Whether a record keeps the request's body and headers (`hooks.journal.storePayloads`). */
  storePayloads: boolean;
  /** Headers no record keeps: the credential list plus this config's own signature headers. */
  credentialHeaders: ReadonlySet<string>;
}

export function createJournalStage(deps: JournalStageDeps): Stage {
  return function journal(ctx) {
    const resolution = need(ctx.resolution, "the resolution");
    const response = admittedResponse(resolution, ctx);
    const at = deps.clock.now();
    const admitted = admit(deps.journal, {
      key: ctx.journalKey,
      at,
      hook: ctx.hook,
      mappingId: resolution.mappingId,
      response,
      delivery: ctx.ticket?.key,
      plans: resolution.plans,
      request: deps.storePayloads ? requestOf(ctx, deps.credentialHeaders) : undefined,
      replayOf: ctx.request.replayOf,
    });
    return admitted.then(() => ({ ...ctx, admitted: response, admittedAt: at }));
  };
}

/** The answer an accepted request gets: a mapping's fixed reply, 204, or its JSON body. */
function admittedResponse(resolution: Resolution, ctx: RequestContext): PipelineResponse {
  if (resolution.reply) return fixedResponse(resolution.reply, ctx.requestId, ctx.extra);
  if (resolution.body === undefined) return noContentResponse(ctx.requestId, ctx.extra);
  return jsonResponse(resolution.status, resolution.body, ctx.requestId, ctx.extra);
}

/** What the record keeps of the request itself (`hooks.journal.storePayloads`). */
function requestOf(ctx: RequestContext, credentialHeaders: ReadonlySet<string>): StoredRequestInput {
  const { request, view, target } = ctx;
  return {
    method: request.method,
    url: view?.url ?? urlWithoutCredentials(target.pathname, target.query),
    view: view?.headers,
    headers: request.headers,
    credentialHeaders,
    raw: need(ctx.raw, "the body"),
    text: need(ctx.text, "the body's text"),
  };
}

/** Seconds a sender is asked to wait before retrying a request the journal could not take. */
const JOURNAL_RETRY_AFTER_SECONDS = 5;

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
export function admit(journal: Journal, input: AdmissionInput): Promise<void> {
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
    response: journalResponse(response),
    delivery: input.delivery,
    // A large payload is kept once, not as the body, the event's raw text and its wrapped copy: a 30 MB body
    // made a 90 MB line whose encoding held the event loop (bench/PROFILE.md, "Hostile load").
    events: compactEvents(events),
    runs: input.plans.flatMap((plan) => (plan.run ? [plan.run] : [])),
    request: input.request ? storedRequest(input.request, events) : undefined,
    replayOf: input.replayOf,
  };
  let written: Promise<void>;
  try {
    written = journal.admit(record);
  } catch (error) {
    // A journal port that throws at once is refused the same way as one that rejects.
    written = Promise.reject(error);
  }
  return written.catch((error: unknown) => {
    throw new HookError("UNAVAILABLE", "The request could not be recorded; retry later.", {
      headers: { "Retry-After": String(JOURNAL_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  });
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
  if (!isUtf8(raw)) return { method, url, headers, bodyBase64: raw.toString("base64") };
  const kept = compactBody(input.text, events);
  // A large body's bytes go with it: the line copies them as they are instead of escaping and encoding the text.
  const bytes = bodyBytes(raw, input.text, kept);
  const stored = { method, url, headers, ...kept, bodyBytes: bytes };
  return stored as NonNullable<AdmittedRecord["request"]>;
}

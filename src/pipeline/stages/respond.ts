/** @module The respond stage: the answer of an admitted request, and its events, which leave before it when it says what became of them and after it otherwise. */

import type { ActionPlan } from "../../actions/plan-action.js";
import type { HookError } from "../../errors.js";
import type { HostLogger } from "../../host/contract.js";
import type { AdmittedRecord, Journal, Outcomes } from "../../journal/journal.js";
import { awaitOutcome, type WaitDeps } from "../await-outcome.js";
import type { HandOff } from "../hand-off.js";
import { logFailure } from "../log-failure.js";
import type { PipelineResponse } from "../request.js";
import { answer, type ExtraHeaders, need, type Outcome, type RequestContext, type Stage } from "../stage.js";
import type { Resolution } from "./resolve.js";

export interface RespondStageDeps extends WaitDeps {
  /** The one door events leave by. */
  handOff: HandOff;
  journal: Journal;
  logger: HostLogger;
}

export function createRespondStage(deps: RespondStageDeps): Stage {
  return function respond(ctx) {
    const resolution = need(ctx.resolution, "the resolution");
    const admitted = need(ctx.admitted, "the admitted answer");
    const emit = () => deps.handOff(ctx.journalKey.id, resolution.plans, ctx.pass);
    const run = resolution.awaitRun;
    if (run === undefined && answersWithOutcome(resolution.plans, resolution.reply !== undefined)) {
      return answerWithOutcome(deps, ctx, emit);
    }
    if (run === undefined) {
      // Remembered before it leaves, so a duplicate arriving meanwhile gets this answer, not a second run.
      const { ticket } = ctx;
      if (ticket === undefined) return answer(ctx, admitted, { after: emit });
      return ticket.settle(admitted).then(() => answer(ctx, admitted, { after: emit }));
    }
    return answerAfterTurn(deps, ctx, run.runId, emit);
  };
}

/** A caller that waits for its agent turn: the turn's outcome, or the admission answer when nobody waits for it. */
async function answerAfterTurn(
  deps: RespondStageDeps,
  ctx: RequestContext,
  runId: string,
  emit: () => ReturnType<HandOff>,
): Promise<Outcome> {
  const resolution = need(ctx.resolution, "the resolution");
  const admitted = need(ctx.admitted, "the admitted answer");
  await ctx.ticket?.settle(admitted);
  let waitedFrom: number | undefined;
  const waited = await awaitOutcome(deps, {
    client: need(ctx.client, "the client address"),
    resolution,
    runId,
    emit: () => {
      // A failing listener still leaves the caller an answer.
      try {
        emit();
      } catch (error) {
        logFailure(deps.logger, error, ctx, "emitting the events failed");
      }
    },
    admitted: () => {
      waitedFrom = performance.now();
    },
    hungUp: ctx.request.hungUp,
  });
  // Nobody read the turn's outcome (too many waiting, or the caller left): the admission answer stands.
  if (waited.body === undefined) return answer(ctx, admitted, { after: waited.after, waitedFrom });
  const response = jsonResponse(200, waited.body, ctx.requestId, ctx.extra);
  // The journal admitted the 202; the caller that waited got the turn's outcome, and the listing shows that.
  if (response.status !== admitted.status) deps.journal.responded?.(ctx.journalKey.id, response.status);
  return answer(ctx, response, { after: waited.after, waitedFrom });
}

/**
 * The events go before the answer, which says what became of them; remembered before it leaves, so a duplicate
 * arriving meanwhile gets this answer, not a second run. Without a delivery id there is nothing to remember: answered
 * at once, without a promise.
 */
function answerWithOutcome(
  deps: RespondStageDeps,
  ctx: RequestContext,
  emit: () => ReturnType<HandOff>,
): Outcome | Promise<Outcome> {
  const resolution = need(ctx.resolution, "the resolution");
  const admitted = need(ctx.admitted, "the admitted answer");
  let response = admitted;
  try {
    response = withEventOutcome(admitted, resolution, emit(), ctx.requestId, ctx.extra);
  } catch (error) {
    // A failing listener leaves the admitted answer; the record stays unfinished for the next start.
    logFailure(deps.logger, error, ctx, "emitting the events failed");
  }
  if (ctx.ticket === undefined) return answer(ctx, response);
  return rememberAnswer(deps, ctx, response);
}

async function rememberAnswer(
  deps: RespondStageDeps,
  ctx: RequestContext,
  response: PipelineResponse,
): Promise<Outcome> {
  const ticket = need(ctx.ticket, "the delivery ticket");
  const admitted = need(ctx.admitted, "the admitted answer");
  try {
    await ticket.settle(response);
  } catch (error) {
    // The events are out already: the sender gets its answer. Refusing it now would free the delivery id and make the
    // sender's retry a second wake; the journal's record still holds the id for the next start.
    logFailure(deps.logger, error, ctx, "remembering the answer for duplicates failed");
  }
  // The journal admitted the answer without it: a duplicate after a restart gets this one too.
  if (response !== admitted) {
    deps.journal.responded?.(ctx.journalKey.id, response.status, {
      key: ticket.key,
      response: journalResponse(response),
      at: need(ctx.admittedAt, "the admission time"),
    });
  }
  return answer(ctx, response);
}

export type EventOutcome = "queued" | "coalesced" | "duplicate";

/**
 * Whether the request's events go out before its answer: a JSON answer of a request that queues system events (a
 * wake, or wakes beside turns from one mapping) says what became of them, which the host tells only while they are
 * emitted. A fixed answer (`response`) or a caller waiting for its turn has no room for it.
 */
export function answersWithOutcome(plans: readonly ActionPlan[], fixed: boolean): boolean {
  if (fixed) return false;
  for (const plan of plans) if (plan.response.kind === "wake") return true;
  return false;
}

/**
 * One word for the request's system events, as OpenClaw's own hooks answer a fan-out: `queued` if any was queued,
 * else `coalesced` if any joined events already waiting, else `duplicate` (the host already held every one).
 * Undefined when the host told nothing (a host that does not report outcomes): the answer then leaves it out.
 * Only the request's own wakes count: a turn that ended within the emit told its summary's outcome too.
 */
export function eventOutcomeOf(plans: readonly ActionPlan[], told: Outcomes): EventOutcome | undefined {
  let found: EventOutcome | undefined;
  for (const plan of plans) {
    if (plan.response.kind !== "wake") continue;
    const outcome = told[plan.response.eventId];
    if (outcome === "queued") return "queued";
    if (outcome === "coalesced") found = "coalesced";
    else if (outcome === "duplicate") found ??= "duplicate";
  }
  return found;
}

/** The admitted answer plus `eventOutcome`, when the host told one (else the admitted answer as it is). */
export function withEventOutcome(
  admitted: PipelineResponse,
  resolution: Resolution,
  told: Outcomes,
  requestId: string,
  extra: ExtraHeaders | undefined,
): PipelineResponse {
  const outcome = eventOutcomeOf(resolution.plans, told);
  if (outcome === undefined || resolution.body === undefined) return admitted;
  return jsonResponse(resolution.status, { ...resolution.body, eventOutcome: outcome }, requestId, extra);
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Headers beyond content and request id that an exchange collected on the way (Deprecation). */
export type { ExtraHeaders } from "../stage.js";

export function jsonResponse(
  status: number,
  body: unknown,
  requestId: string,
  extra: ExtraHeaders | undefined,
): PipelineResponse {
  const text = JSON.stringify(body);
  const headers: Record<string, string> = {
    "Content-Type": JSON_TYPE,
    "Content-Length": String(Buffer.byteLength(text)),
    "X-Request-Id": requestId,
  };
  if (extra) Object.assign(headers, extra);
  return { status, headers, body: text };
}

export function noContentResponse(requestId: string, extra: ExtraHeaders | undefined): PipelineResponse {
  return { status: 204, headers: { "X-Request-Id": requestId, ...extra }, body: undefined };
}

/** The error's own headers (Allow, Retry-After, WWW-Authenticate) win over the exchange's. */
export function errorResponse(
  error: HookError,
  requestId: string,
  extra: ExtraHeaders | undefined,
): PipelineResponse {
  return jsonResponse(error.status, error.toJSON(), requestId, { ...extra, ...error.headers });
}

/** A mapping's fixed success answer (TwiML, a slash command's text) instead of the JSON body. */
export function fixedResponse(
  reply: { status: number; contentType: string; body: string | undefined },
  requestId: string,
  extra: ExtraHeaders | undefined,
): PipelineResponse {
  if (reply.body === undefined) return { ...noContentResponse(requestId, extra), status: reply.status };
  const headers: Record<string, string> = {
    "Content-Type": reply.contentType,
    "Content-Length": String(Buffer.byteLength(reply.body)),
    "X-Request-Id": requestId,
  };
  if (extra) Object.assign(headers, extra);
  return { status: reply.status, headers, body: reply.body };
}

/** A duplicate delivery's answer: the first request's, marked as a replay, under this request's id. */
export function replayedResponse(
  stored: { status: number; contentType: string | undefined; body: string | undefined },
  requestId: string,
): PipelineResponse {
  const headers: Record<string, string> = { "X-Request-Id": requestId, "Idempotent-Replay": "true" };
  if (stored.body !== undefined) {
    headers["Content-Type"] = stored.contentType ?? JSON_TYPE;
    headers["Content-Length"] = String(Buffer.byteLength(stored.body));
  }
  return { status: stored.status, headers, body: stored.body };
}

/** An answer as the journal keeps it for a delivery's duplicates. */
export function journalResponse(response: PipelineResponse): AdmittedRecord["response"] {
  return { status: response.status, contentType: response.headers["Content-Type"], body: response.body };
}

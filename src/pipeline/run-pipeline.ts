/** @module The pipeline: a request routed to its hook, run through the stage list, answered once, then finished (events, listing, metrics). */

import type { Clock, Ids } from "../clock.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal } from "../journal/journal.js";
import type { HookMetrics } from "../metrics/metrics.js";
import { urlWithoutCredentials } from "../safety/credentials.js";
import type { SecretRedactor } from "../safety/secret-redaction.js";
import type { Verifiers } from "../verify/verifier.js";
import { listAnswered } from "./list-answered.js";
import { logFailure } from "./log-failure.js";
import { createRefuse } from "./refuse.js";
import type { PipelineRequest, Responder } from "./request.js";
import { type Outcome, type RequestContext, type RequestTarget, runStages } from "./stage.js";
import type { ClientAddressResolver } from "./stages/admit.js";
import { journalKeyFor } from "./stages/journal.js";
import type { Resolution, ResolutionNotes } from "./stages/resolve.js";
import { pipelineStages, type StageDeps } from "./stages.js";

export interface PipelineDeps extends StageDeps, FinishDeps {
  basePath: string;
  /** Which verifier guards each hook: the token, or a signature on the body's bytes. */
  verifiers: Verifiers;
  ids: Ids;
}

/** What one request came to, as replay and the inspector read it. */
export interface Exchange {
  /** False when the path is not below `hooks.path`: the request was left alone, not answered. */
  claimed: boolean;
  requestId: string;
  hook: string | undefined;
  status: number;
  mappingId: string | undefined;
  resolution: Resolution | undefined;
  /** The parsed body, once it was read (replay explains the mappings' verdicts with it). */
  body?: unknown;
  notes: ResolutionNotes;
}

export type Pipeline = (request: PipelineRequest, responder: Responder) => Promise<Exchange>;

/**
 * Route, stages, answer, finish. A replay runs this same function with its own ports (a journal that records
 * nothing, a bus nobody listens to, a store that remembers nothing), not with flags.
 */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const stages = pipelineStages(deps);
  const refuse = createRefuse(deps.logger);
  const finish = createFinish(deps);
  return async function runPipeline(request, responder) {
    const ctx = route(deps, request);
    if (ctx.hook === undefined) return unclaimed(ctx.requestId);
    const outcome = await runStages(stages, ctx, refuse);
    // The one place the answer is written.
    await responder.respond(outcome.response);
    const last = outcome.ctx ?? ctx;
    finish(outcome, last);
    return {
      claimed: true,
      requestId: ctx.requestId,
      hook: ctx.hook,
      status: outcome.response.status,
      mappingId: last.notes?.mappingId,
      resolution: last.resolution,
      ...(last.text !== undefined && { body: last.body }),
      notes: last.notes ?? {},
    };
  };
}

/** The route: the hook name below the base path and its verifier, or no hook when the path is not ours. */
function route(
  deps: PipelineDeps,
  request: PipelineRequest,
): RequestContext | { hook: undefined; requestId: string } {
  const started = performance.now();
  const requestId = requestIdFor(request.headers["x-request-id"], deps.ids);
  const target = splitTarget(request.url);
  const hook = hookName(target.pathname, deps.basePath);
  if (hook === undefined) return { hook, requestId };
  // Every field a stage may learn is here from the start, in one order: a stage's `{ ...ctx, field }` then copies an
  // object of one shape, where adding a field each time made a new hidden class per stage and cost about 30 µs a
  // request (bench/PROFILE.md, "Stages").
  return {
    request,
    requestId,
    journalKey: journalKeyFor(request.headers, requestId, deps.ids),
    target,
    started,
    hook,
    verifier: deps.verifiers.forHook(hook),
    address: undefined,
    client: undefined,
    identity: undefined,
    extra: undefined,
    route: undefined,
    counted: undefined,
    bodyKind: undefined,
    maxBytes: undefined,
    raw: undefined,
    view: undefined,
    text: undefined,
    body: undefined,
    ticket: undefined,
    notes: undefined,
    resolution: undefined,
    pass: undefined,
    admitted: undefined,
    admittedAt: undefined,
  };
}

function unclaimed(requestId: string): Exchange {
  return {
    claimed: false,
    requestId,
    hook: undefined,
    status: 0,
    mappingId: undefined,
    resolution: undefined,
    notes: {},
  };
}

export interface FinishDeps {
  journal: Journal;
  clock: Clock;
  metrics: HookMetrics;
  bus: HookBus;
  logger: HostLogger;
  /** For a refusal before the client address was resolved (the method). */
  clientAddress: ClientAddressResolver;
  credentialHeaders: ReadonlySet<string>;
  /** Hides this config's token and signing secrets in a listed refusal, wherever the sender put them. */
  redactSecrets: SecretRedactor;
}

export function createFinish(deps: FinishDeps): (outcome: Outcome, ctx: RequestContext) => void {
  return (outcome, ctx) => {
    try {
      outcome.after?.();
    } catch (error) {
      // The answer left; only emitting failed (a throwing listener). The request stays answered.
      logFailure(deps.logger, error, ctx, "emitting the events failed");
    }
    const mappingId = ctx.notes?.mappingId;
    const { status } = outcome.response;
    if (outcome.refusal !== undefined) listRefusal(deps, outcome, ctx, mappingId);
    const ended = performance.now();
    const durationMs = Math.round((ended - ctx.started) * 1000) / 1000;
    // A request that waited for its turn is timed to its admission: the turn's own length (up to a day) is the
    // agent's time, not the intake's, and would push every such request past the histogram's buckets.
    const admitted = ((outcome.waitedFrom ?? ended) - ctx.started) / 1000;
    deps.metrics.request(ctx.hook, mappingId, status, admitted, ctx.raw?.length ?? 0);
    requestEvent(deps, ctx, mappingId, status, durationMs);
  };
}

/**
 * Every answer without admission is listed; a stranger's (nothing accepted yet) within the per-client and all-clients
 * limits, a duplicate or a repeated refusal (a 429 of a rate limit) within its series', so that a flood of them cannot
 * fill the disk.
 */
function listRefusal(
  deps: FinishDeps,
  outcome: Outcome,
  ctx: RequestContext,
  mappingId: string | undefined,
): void {
  const refusal = outcome.refusal!;
  const { request, target } = ctx;
  listAnswered(deps.journal, {
    key: ctx.journalKey,
    at: deps.clock.now(),
    hook: ctx.hook,
    mappingId,
    status: outcome.response.status,
    code: refusal.code,
    reason: refusal.reason,
    error: refusal.error,
    client: ctx.client ?? deps.clientAddress(request.remoteAddress, request.headers),
    method: request.method,
    url: urlWithoutCredentials(target.pathname, target.query),
    headers: request.headers,
    credentialHeaders: deps.credentialHeaders,
    redact: deps.redactSecrets,
    // A handshake's verify token makes no trusted sender of its refusals.
    perClient: ctx.identity === undefined || ctx.identity.via === "handshake",
    delivery: refusal.delivery,
  });
}

/** The one event every request causes (no payload, no headers); a failing listener never fails the request. */
function requestEvent(
  deps: FinishDeps,
  ctx: RequestContext,
  mappingId: string | undefined,
  status: number,
  durationMs: number,
): void {
  const { hook, requestId } = ctx;
  const method = ctx.request.method;
  try {
    deps.bus.emit(
      "hooks:request",
      mappingId === undefined
        ? { source: { hook, requestId }, method, hook, status, durationMs }
        : { source: { hook, mappingId, requestId }, method, hook, status, mappingId, durationMs },
    );
  } catch (error) {
    deps.logger.error(`a hooks:request listener failed: ${(error as Error)?.message ?? String(error)}`, {
      requestId,
    });
  }
}

export function splitTarget(url: string): RequestTarget {
  const queryStart = url.indexOf("?");
  if (queryStart === -1) return { pathname: url, query: undefined, rawQuery: "" };
  const rawQuery = url.slice(queryStart + 1);
  return { pathname: url.slice(0, queryStart), query: new URLSearchParams(rawQuery), rawQuery };
}

/**
 * Stage 1: the hook name below the base path with outer slashes trimmed, or undefined when the path is not ours
 * (the route does not claim it). The name is matched as sent, never percent-decoded: `/hooks/wak%65` is not
 * `wake`, and a mapping on `github/push` is not reached by `github%2Fpush`.
 */
export function hookName(pathname: string, basePath: string): string | undefined {
  if (!pathname.startsWith(basePath)) return undefined;
  const rest = pathname.slice(basePath.length);
  if (rest !== "" && rest[0] !== "/") return undefined;
  return rest.replace(/^\/+|\/+$/g, "");
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(header: string | string[] | undefined, ids: Ids): string {
  return typeof header === "string" && SANE_ID.test(header) ? header : ids.uuid();
}

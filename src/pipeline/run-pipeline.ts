/** @module The request pipeline: one async function running the stages in order, for live requests and replayed fixtures alike. */
import type { RunCompletionTracker } from "../actions/run-completion.js";
import { HookError, toHookError } from "../errors.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Ids } from "../ids.js";
import type { Journal } from "../journal/journal.js";
import {
  headersWithoutCredentials,
  queryWithoutCredentials,
  urlWithoutCredentials,
} from "../safety/credentials.js";
import type { Authenticator } from "./authenticate.js";
import { emitPlans, emitRequestEvent } from "./emit.js";
import { classifyContentType, parseBody } from "./parse-body.js";
import { checkDeclaredLength, readLimitedBody } from "./read-body.js";
import type { CapturedRequest, PipelineRequest, Responder } from "./request.js";
import { requestIdFor } from "./request-id.js";
import type { Resolution, ResolutionNotes, Resolver } from "./resolve.js";
import { type ExtraHeaders, errorResponse, jsonResponse, noContentResponse } from "./respond.js";
import { checkMethod, hookName, notFound, splitTarget } from "./route.js";

export interface PipelineDeps {
  basePath: string;
  bodyTimeoutMs: number;
  authenticate: Authenticator;
  resolver: Resolver;
  /** Where accepted requests are recorded before their answer; none means nothing is recorded. */
  journal: Journal | undefined;
  tracker: RunCompletionTracker;
  bus: HookBus;
  logger: HostLogger;
  ids: Ids;
  /** Receives every authenticated request whose body was read (`hooks serve --capture`). */
  capture?: ((request: CapturedRequest) => void) | undefined;
}

export interface RunOptions {
  /** Replay: every stage up to the answer, nothing emitted, nothing journaled. */
  dryRun?: boolean;
}

/** What one request came to: its answer, and the resolution replay shows. */
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

const NO_VIEW = Object.freeze({ headers: Object.freeze({}), query: Object.freeze({}), url: "" });

export type Pipeline = (
  request: PipelineRequest,
  responder: Responder,
  options?: RunOptions,
) => Promise<Exchange>;

/** Read top to bottom, this is the order of checks: cheap refusals first, no body read for a request that cannot succeed. */
export function createPipeline(deps: PipelineDeps): Pipeline {
  return async function runPipeline(request, responder, options = {}) {
    const started = performance.now();
    const requestId = requestIdFor(request.headers["x-request-id"], deps.ids);
    const { pathname, query } = splitTarget(request.url);
    const exchange: Exchange = {
      claimed: true,
      requestId,
      hook: undefined,
      status: 0,
      mappingId: undefined,
      resolution: undefined,
      notes: {},
    };
    const hook = hookName(pathname, deps.basePath);
    if (hook === undefined) {
      exchange.claimed = false;
      return exchange;
    }
    exchange.hook = hook;
    let extra: ExtraHeaders | undefined;
    let answered = false;
    try {
      checkMethod(request.method);
      const auth = await deps.authenticate({
        hook,
        headers: request.headers,
        query,
        remoteAddress: request.remoteAddress,
        requestId,
      });
      if (auth.viaQuery) extra = { Deprecation: "true" };
      const route = deps.resolver.route(hook);
      if (!route) throw notFound();
      const kind = classifyContentType(request.headers["content-type"]);
      const maxBytes = deps.resolver.bodyLimit(route);
      checkDeclaredLength(request.headers, maxBytes);
      const raw = await readLimitedBody(request.body, {
        maxBytes,
        timeoutMs: deps.bodyTimeoutMs,
      });
      // Mappings and captures see the request without credentials; a direct wake or agent body needs none of it.
      const view =
        route.kind === "mapped" || deps.capture
          ? {
              headers: headersWithoutCredentials(request.headers),
              query: queryWithoutCredentials(query),
              url: urlWithoutCredentials(pathname, query),
            }
          : NO_VIEW;
      if (deps.capture && !options.dryRun) {
        const { headers, query: shownQuery } = view;
        capture(deps, { requestId, method: request.method, hook, headers, query: shownQuery, rawBody: raw });
      }
      const body = parseBody(kind, raw);
      exchange.body = body;
      const resolution = await deps.resolver.resolve(
        route,
        { hook, ...view, body, bodyBytes: raw.length, requestId },
        exchange.notes,
      );
      exchange.resolution = resolution;
      if (deps.journal && !options.dryRun) await admit(deps.journal, requestId, hook, resolution);
      exchange.status = resolution.status;
      await responder.respond(
        resolution.body === undefined
          ? noContentResponse(requestId, extra)
          : jsonResponse(resolution.status, resolution.body, requestId, extra),
      );
      answered = true;
      if (!options.dryRun) emitPlans(resolution.plans, deps.bus, deps.tracker);
    } catch (thrown) {
      const error = toHookError(thrown);
      if (answered) {
        // The answer left; only emitting failed (a throwing listener). The request stays answered.
        logFailure(deps.logger, error, exchange, "emitting the events failed");
      } else {
        exchange.status = error.status;
        logFailure(deps.logger, error, exchange, "hook request failed");
        await responder.respond(errorResponse(error, requestId, extra));
      }
    }
    // The owning mapping, learnt by the resolve stage whether it succeeded or not.
    exchange.mappingId = exchange.notes.mappingId;
    if (!options.dryRun) {
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      const { mappingId, status } = exchange;
      emitRequestEvent(
        { method: request.method, hook, requestId, mappingId, status, durationMs },
        deps.bus,
        deps.logger,
      );
    }
    return exchange;
  };
}

/** Seconds a sender is asked to wait before retrying a request the journal could not take. */
const JOURNAL_RETRY_AFTER_SECONDS = 5;

/** Records the accepted request; a journal that cannot is a 503 the sender retries, with nothing emitted. */
async function admit(
  journal: Journal,
  requestId: string,
  hook: string,
  resolution: Resolution,
): Promise<void> {
  try {
    await journal.admit({
      requestId,
      hook,
      mappingId: resolution.mappingId,
      status: resolution.status,
      events: resolution.plans.flatMap((plan) => plan.events),
    });
  } catch (error) {
    throw new HookError("UNAVAILABLE", "The request could not be recorded; retry later.", {
      headers: { "Retry-After": String(JOURNAL_RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
}

/** Hands the request to the capture hook; a failing hook never fails the request. */
function capture(deps: PipelineDeps, request: CapturedRequest): void {
  try {
    deps.capture!(request);
  } catch (error) {
    deps.logger.warn(`request capture failed: ${(error as Error).message}`, { requestId: request.requestId });
  }
}

/** 5xx are logged here with their cause; mapping failures were logged by the engine, with the module. */
function logFailure(logger: HostLogger, error: HookError, exchange: Exchange, what: string): void {
  if (error.status < 500 || error.code === "MAPPING_FAILED") return;
  const cause =
    error.cause instanceof Error
      ? error.cause.message
      : error.cause === undefined
        ? undefined
        : String(error.cause);
  logger.error(`${what}: ${error.code}${cause ? `: ${cause}` : ""}`, {
    requestId: exchange.requestId,
    hook: exchange.hook,
    mappingId: exchange.notes.mappingId,
  });
}

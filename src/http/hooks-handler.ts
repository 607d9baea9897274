/** @module The route handler for `hooks.path`: the order of checks of SPEC §4, then dispatch, respond, emit. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DispatchOutcome, HookRoute, RequestDispatcher } from "../actions/dispatch-request.js";
import type { ActionPlan } from "../actions/plan-action.js";
import type { RunCompletionTracker } from "../actions/run-completion.js";
import { DeadlineSweeper } from "../deadline-sweeper.js";
import type { HookBus } from "../events.js";
import type { CapturedRequest, HostLogger } from "../host/contract.js";
import type { AuthResult } from "./authenticate.js";
import { HookError, isHookError, toHookError } from "./errors.js";
import { type BodyKind, classifyContentType, parseBody } from "./parse-body.js";
import { checkDeclaredLength, readBody } from "./read-body.js";
import { requestIdFor } from "./request-id.js";
import { type ExtraHeaders, sendError, sendJson, sendNoContent } from "./respond.js";
import { headersWithoutCredentials, queryWithoutToken, urlWithoutToken } from "./strip-credentials.js";

export interface HooksHandlerDeps {
  basePath: string;
  bodyTimeoutMs: number;
  authenticate: (req: IncomingMessage, query: URLSearchParams | undefined, requestId: string) => AuthResult;
  dispatcher: RequestDispatcher;
  tracker: RunCompletionTracker;
  bus: HookBus;
  logger: HostLogger;
  capture?: ((request: CapturedRequest) => void) | undefined;
}

/** How long a connection refused mid-body may linger before it is cut, so it cannot be drained without bound. */
const REFUSED_SOCKET_LINGER_MS = 1_000;

/** Emits a dispatch's events; runs are tracked first because a subsystem may answer synchronously. */
export function commitPlans(plans: readonly ActionPlan[], bus: HookBus, tracker: RunCompletionTracker): void {
  for (const plan of plans) {
    if (plan.run) tracker.track(plan.run);
    for (const planned of plan.events) bus.emit(planned.event, planned.payload as never);
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

const NO_VIEW = { headers: {}, query: {}, url: "" };

const methodNotAllowed = () =>
  new HookError("METHOD_NOT_ALLOWED", "Hooks accept POST only.", { headers: { Allow: "POST" } });
const notFound = () => new HookError("NOT_FOUND", "No hook is configured at this path.");

/** What the handler knows about one request, carried from the checks to the answer and its event. */
interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly started: number;
  readonly requestId: string;
  readonly hook: string | undefined;
  /** Deprecation when the token came in the query. */
  extraHeaders: ExtraHeaders;
  mappingId: string | undefined;
}

/**
 * The handler works with callbacks, not async/await: a direct wake or agent request is read, dispatched and
 * answered in the turn its body arrives, with no promise per request. Only a mapped request whose transform
 * is asynchronous waits on one.
 */
export function createHooksHandler(deps: HooksHandlerDeps) {
  const { basePath, dispatcher, bus } = deps;
  const deadlines = DeadlineSweeper.forTimeout(deps.bodyTimeoutMs);

  /** Emits `hooks:request`, the one event every request causes; a failing listener never fails the request. */
  const emitRequestEvent = (exchange: Exchange, status: number): void => {
    const { hook = "", requestId, mappingId } = exchange;
    const durationMs = Math.round((performance.now() - exchange.started) * 1000) / 1000;
    const method = exchange.req.method ?? "";
    try {
      bus.emit(
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
  };

  /** Answers with the error (when nothing was sent yet) and closes a connection whose body was not read. */
  const fail = (exchange: Exchange, thrown: unknown): void => {
    const { req, res } = exchange;
    const error = toHookError(thrown);
    if (!isHookError(thrown)) logFailure(deps.logger, error, exchange);
    if (!req.complete && hasBody(req)) refuseConnection(req, res);
    if (!res.headersSent) sendError(res, error, exchange.requestId, exchange.extraHeaders);
    emitRequestEvent(exchange, error.status);
  };

  const answer = (exchange: Exchange, outcome: DispatchOutcome): void => {
    const { res } = exchange;
    exchange.mappingId = outcome.mappingId;
    if (outcome.error) {
      logFailure(deps.logger, outcome.error, exchange);
      sendError(res, outcome.error, exchange.requestId, exchange.extraHeaders);
    } else {
      commitPlans(outcome.plans, bus, deps.tracker);
      if (outcome.body === undefined) sendNoContent(res, exchange.requestId, exchange.extraHeaders);
      else sendJson(res, outcome.status, outcome.body, exchange.requestId, exchange.extraHeaders);
    }
    emitRequestEvent(exchange, outcome.status);
  };

  const afterBody = (
    exchange: Exchange,
    route: HookRoute,
    kind: BodyKind,
    raw: Buffer,
    pathname: string,
    query: URLSearchParams | undefined,
  ): void => {
    const { req } = exchange;
    const hook = exchange.hook!;
    // Mappings and captures see the request without credentials; direct wake/agent bodies need none of it.
    const view =
      route.kind === "mapped" || deps.capture
        ? {
            headers: headersWithoutCredentials(req.headers),
            query: queryWithoutToken(query),
            url: urlWithoutToken(pathname, query),
          }
        : NO_VIEW;
    if (deps.capture) {
      captureSafely(deps, {
        requestId: exchange.requestId,
        method: req.method ?? "POST",
        hook,
        headers: view.headers,
        query: view.query,
        rawBody: raw,
      });
    }
    const body = parseBody(kind, raw);
    const dispatched = dispatcher.dispatch(route, {
      hook,
      ...view,
      body,
      bodyBytes: raw.length,
      requestId: exchange.requestId,
    });
    if (!(dispatched instanceof Promise)) answer(exchange, dispatched);
    // dispatch never rejects; answer is guarded, so the promise cannot reject unhandled either.
    else void dispatched.then((outcome) => guarded(exchange, () => answer(exchange, outcome)));
  };

  /** Runs a step outside the handler's own call (a stream event, a promise): nothing may be thrown from there. */
  const guarded = (exchange: Exchange, step: () => void): void => {
    try {
      step();
    } catch (thrown) {
      fail(exchange, thrown);
    }
  };

  return function handleHookRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? "/";
    const queryStart = url.indexOf("?");
    const pathname = queryStart === -1 ? url : url.slice(0, queryStart);
    const query = queryStart === -1 ? undefined : new URLSearchParams(url.slice(queryStart + 1));
    const exchange: Exchange = {
      req,
      res,
      started: performance.now(),
      requestId: requestIdFor(req.headers["x-request-id"]),
      hook: hookName(pathname, basePath),
      extraHeaders: undefined,
      mappingId: undefined,
    };
    let route: HookRoute | undefined;
    let kind: BodyKind;
    let maxBytes: number;
    try {
      const { hook } = exchange;
      if (hook === undefined) throw notFound();
      if (req.method !== "POST") throw methodNotAllowed();
      const auth = deps.authenticate(req, query, exchange.requestId);
      if (auth.viaQuery) exchange.extraHeaders = DEPRECATED;
      route = hook === "" ? undefined : dispatcher.route(hook);
      if (!route) throw notFound();
      kind = classifyContentType(req.headers["content-type"]);
      maxBytes = dispatcher.bodyLimit(route);
      checkDeclaredLength(req, maxBytes);
    } catch (thrown) {
      fail(exchange, thrown);
      return;
    }
    readBody(req, maxBytes, deps.bodyTimeoutMs, deadlines, (error, raw) => {
      if (error) fail(exchange, error);
      else guarded(exchange, () => afterBody(exchange, route, kind, raw!, pathname, query));
    });
  };
}

const DEPRECATED: ExtraHeaders = { Deprecation: "true" };

/** The hook name below the base path with outer slashes trimmed, or undefined when the path is not ours. */
export function hookName(pathname: string, basePath: string): string | undefined {
  if (!pathname.startsWith(basePath)) return undefined;
  const rest = pathname.slice(basePath.length);
  if (rest !== "" && rest[0] !== "/") return undefined;
  let start = 0;
  let end = rest.length;
  while (start < end && rest.charCodeAt(start) === 47) start++;
  while (end > start && rest.charCodeAt(end - 1) === 47) end--;
  const name = rest.slice(start, end);
  if (!name.includes("%")) return name;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** Hands the request to the host's capture hook; a failing hook never fails the request. */
function captureSafely(deps: HooksHandlerDeps, request: CapturedRequest): void {
  try {
    deps.capture!(request);
  } catch (error) {
    deps.logger.warn(`request capture failed: ${(error as Error).message}`, { requestId: request.requestId });
  }
}

/** The body will not be read: close the connection after the response instead of draining it. */
function refuseConnection(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.setHeader("Connection", "close");
  res.once("finish", () => {
    req.socket.end();
    setTimeout(() => req.socket.destroy(), REFUSED_SOCKET_LINGER_MS).unref();
  });
}

/** Mapping failures are logged by the mapping engine, with the module; everything else 5xx is logged here. */
function logFailure(
  logger: HostLogger,
  error: HookError,
  fields: { requestId: string; hook: string | undefined; mappingId: string | undefined },
): void {
  if (error.status < 500 || error.code === "MAPPING_FAILED") return;
  const cause =
    error.cause instanceof Error
      ? error.cause.message
      : error.cause === undefined
        ? undefined
        : String(error.cause);
  logger.error(`hook request failed: ${error.code}${cause ? `: ${cause}` : ""}`, {
    requestId: fields.requestId,
    hook: fields.hook,
    mappingId: fields.mappingId,
  });
}

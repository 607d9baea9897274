/** @module The route handler for `hooks.path`: the order of checks of SPEC §4, then dispatch, respond, emit. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestDispatcher } from "../actions/dispatch-request.js";
import type { ActionPlan } from "../actions/plan-action.js";
import type { RunCompletionTracker } from "../actions/run-completion.js";
import type { HookBus } from "../events.js";
import type { CapturedRequest, HostLogger } from "../host/contract.js";
import type { AuthResult } from "./authenticate.js";
import { HookError, isHookError, toHookError } from "./errors.js";
import { classifyContentType, parseBody } from "./parse-body.js";
import { readBody } from "./read-body.js";
import { requestIdFor } from "./request-id.js";
import { sendError, sendJson, sendNoContent } from "./respond.js";
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

export function createHooksHandler(deps: HooksHandlerDeps) {
  const { basePath, dispatcher, bus } = deps;

  return async function handleHookRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const requestId = requestIdFor(req.headers["x-request-id"]);
    res.setHeader("X-Request-Id", requestId);
    const url = req.url ?? "/";
    const queryStart = url.indexOf("?");
    const pathname = queryStart === -1 ? url : url.slice(0, queryStart);
    const query = queryStart === -1 ? undefined : new URLSearchParams(url.slice(queryStart + 1));
    const hook = hookName(pathname, basePath);
    let mappingId: string | undefined;
    let status = 500;

    try {
      if (hook === undefined) throw notFound();
      if (req.method !== "POST") throw methodNotAllowed();
      const auth = deps.authenticate(req, query, requestId);
      if (auth.viaQuery) res.setHeader("Deprecation", "true");
      const route = hook === "" ? undefined : dispatcher.route(hook);
      if (!route) throw notFound();
      const kind = classifyContentType(req.headers["content-type"]);
      const raw = await readBody(req, {
        maxBytes: dispatcher.bodyLimit(route),
        timeoutMs: deps.bodyTimeoutMs,
      });
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
          requestId,
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
        requestId,
      });
      const outcome = dispatched instanceof Promise ? await dispatched : dispatched;
      mappingId = outcome.mappingId;
      status = outcome.status;
      if (outcome.error) {
        logFailure(deps.logger, outcome.error, { requestId, hook, mappingId });
        sendError(res, outcome.error);
      } else {
        commitPlans(outcome.plans, bus, deps.tracker);
        if (outcome.body === undefined) sendNoContent(res);
        else sendJson(res, status, outcome.body);
      }
    } catch (thrown) {
      const error = toHookError(thrown);
      status = error.status;
      if (!isHookError(thrown)) logFailure(deps.logger, error, { requestId, hook, mappingId });
      if (!req.complete && hasBody(req)) refuseConnection(req, res);
      if (!res.headersSent) sendError(res, error);
    } finally {
      const event = {
        source:
          mappingId === undefined
            ? { hook: hook ?? "", requestId }
            : { hook: hook ?? "", mappingId, requestId },
        method: req.method ?? "",
        hook: hook ?? "",
        status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      };
      bus.emit("hooks:request", mappingId === undefined ? event : { ...event, mappingId });
    }
  };
}

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

/** @module The inspector over HTTP, for any host: the page, its script, its JSON API and its login, under one base path. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthThrottle } from "../pipeline/credential-judge.js";
import { answerApi } from "./inspector-api.js";
import { answerView } from "./inspector-html-routes.js";
import { VIEW_CSS_SOURCE } from "./inspector-html-style.js";
import { send, sendError, sendJson } from "./inspector-http-io.js";
import { login } from "./inspector-login.js";
import { type InspectorAsset, inspectorAssets, inspectorPage } from "./inspector-page.js";
import { createInspectorSessions, type InspectorSessions } from "./inspector-session.js";
import type { InspectorSource } from "./inspector-source.js";
import { crossOriginReason } from "./same-origin.js";

export type InspectorAuth =
  /** The reference gateway: the key from the `inspector:` link's fragment, exchanged for a session cookie. */
  | { kind: "session"; key: string }
  /** The host authenticated the request already (OpenClaw's gateway auth). */
  | { kind: "host" };

export interface InspectorHandlerOptions {
  source: () => InspectorSource | undefined;
  auth: InspectorAuth;
  /** Where the page is served, e.g. `/inspector`; everything below it is the handler's. */
  basePath: string;
  /** Counts wrong keys per client address (`plugin.authThrottle("inspector")`): past the limit, 429. */
  throttle?: (() => AuthThrottle | undefined) | undefined;
  /**
   * Who may show the page in a frame: nobody (`deny`, the default), or pages of its own origin (`same-origin`: a
   * host whose own UI frames it, as a Control UI tab may).
   */
  framing?: "deny" | "same-origin";
  /**
   * What GET on the base path shows: the page with its script (`scripted`, the default), or plain HTML pages that
   * need no script and post nothing (`server-rendered`: list, detail, dry run, fixture, comparison), for a host
   * that shows the page in a sandboxed frame whose script cannot call the API (a Control UI tab). Host auth only.
   */
  page?: "scripted" | "server-rendered";
}

/**
 * Everything the handler sends carries these: nothing inline runs, nothing is cached, nothing leaks in a Referer.
 * The server-rendered pages run no script at all, so their policy allows none, and only their own inline style.
 */
function securityHeaders(
  framing: "deny" | "same-origin",
  page: "scripted" | "server-rendered",
): Record<string, string> {
  const ancestors = framing === "deny" ? "'none'" : "'self'";
  const sources =
    page === "scripted"
      ? "script-src 'self'; style-src 'self'; connect-src 'self';"
      : `style-src ${VIEW_CSS_SOURCE};`;
  return {
    "Content-Security-Policy": `default-src 'none'; ${sources} img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors ${ancestors}`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": framing === "deny" ? "DENY" : "SAMEORIGIN",
  };
}

/** What a handler works with, fixed when it is made. */
interface HandlerContext {
  options: InspectorHandlerOptions;
  /** The base path without a trailing slash. */
  base: string;
  /** Session cookies for `auth: session`; undefined when the host authenticates. */
  sessions: InspectorSessions | undefined;
  assets: ReadonlyMap<string, InspectorAsset>;
  pageKind: "scripted" | "server-rendered";
}

export function createInspectorHandler(
  options: InspectorHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const base = options.basePath.replace(/\/+$/, "");
  const sessions: InspectorSessions | undefined =
    options.auth.kind === "session" ? createInspectorSessions(options.auth.key, base || "/") : undefined;
  const assets = inspectorAssets();
  const pageKind = options.page ?? "scripted";
  // Its pages have no login form: a session's key could not be entered there.
  if (pageKind === "server-rendered" && options.auth.kind !== "host")
    throw new Error('createInspectorHandler: page "server-rendered" needs auth { kind: "host" }');
  const guard = securityHeaders(options.framing ?? "deny", pageKind);
  const handler: HandlerContext = { options, base, sessions, assets, pageKind };

  return async (req, res) => {
    const url = targetOf(req.url);
    // Not a path this handler could own (`//host`, say): left to the host, which answers it as it answers strangers.
    if (url === undefined) return false;
    const path = url.pathname;
    if (path !== base && !path.startsWith(`${base}/`)) return false;
    // Every answer below carries them, an error's too.
    for (const [name, value] of Object.entries(guard)) res.setHeader(name, value);
    // Before anything acts: a page of another site may not replay, log in or out with the user's browser.
    const crossOrigin = crossOriginReason(req);
    if (crossOrigin !== undefined) {
      sendError(res, 403, "CROSS_ORIGIN", `Refused: ${crossOrigin}. Use the inspector's own page.`);
      return true;
    }
    try {
      await route(handler, req, res, url);
    } catch (error) {
      if (!res.headersSent)
        sendError(res, 500, "INTERNAL", `The inspector failed: ${(error as Error).message}`);
      else res.destroy();
    }
    return true;
  };
}

/** Answers a request for a path under the base path. */
async function route(
  handler: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const { sessions } = handler;
  const rest = url.pathname.slice(handler.base.length);
  const method = req.method ?? "GET";
  if (handler.pageKind === "server-rendered" && !rest.startsWith("/api/")) {
    if (await answeredServerRendered(handler, res, method, rest, url.searchParams)) return;
  }
  if (rest === "" || rest === "/") {
    answerPage(handler, req, res, method);
    return;
  }
  if (rest.startsWith("/assets/")) {
    const asset = handler.assets.get(rest.slice("/assets/".length));
    if (!asset || (method !== "GET" && method !== "HEAD")) sendError(res, 404, "NOT_FOUND", "No such file.");
    else send(res, 200, asset.type, asset.body);
    return;
  }
  if (rest === "/api/session") {
    if (method === "POST") await login(req, res, sessions, handler.options.throttle);
    else if (method === "DELETE" && sessions)
      sendJson(res, 200, { ok: true }, { "Set-Cookie": sessions.close(req) });
    else sendError(res, 405, "METHOD_NOT_ALLOWED", "Log in with POST.", { Allow: "POST, DELETE" });
    return;
  }
  if (rest.startsWith("/api/")) {
    if (!loggedIn(sessions, req)) {
      sendError(res, 401, "UNAUTHORIZED", "Log in first: open the inspector: link that hooks serve printed.");
      return;
    }
    await answerApi(handler.options.source(), req, res, rest.slice("/api".length), url.searchParams);
    return;
  }
  sendError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
}

/**
 * The script-free pages answer what they serve; a method they do not read with is refused here, except under
 * `/assets/`, which the usual routes answer. False: not answered yet.
 */
async function answeredServerRendered(
  handler: HandlerContext,
  res: ServerResponse,
  method: string,
  rest: string,
  params: URLSearchParams,
): Promise<boolean> {
  const reads = method === "GET" || method === "HEAD";
  const answer = reads ? await answerView(handler.options.source(), handler.base, rest, params) : undefined;
  if (answer) {
    send(res, answer.status, answer.type, answer.body);
    return true;
  }
  if (!reads && !rest.startsWith("/assets/")) {
    sendError(res, 405, "METHOD_NOT_ALLOWED", "These pages are read with GET.", { Allow: "GET, HEAD" });
    return true;
  }
  return false;
}

/** The base path itself: the scripted page, or its login form. */
function answerPage(
  handler: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
): void {
  if (method !== "GET" && method !== "HEAD") {
    sendError(res, 405, "METHOD_NOT_ALLOWED", "The page is read with GET.", { Allow: "GET, HEAD" });
    return;
  }
  const view = loggedIn(handler.sessions, req) ? "app" : "login";
  const journaling = handler.options.source()?.journaling ?? false;
  // The login form is not the page: a 401, so nothing mistakes it for a served inspector.
  send(
    res,
    view === "app" ? 200 : 401,
    "text/html; charset=utf-8",
    inspectorPage({ basePath: handler.base, view, journaling }),
  );
}

function loggedIn(sessions: InspectorSessions | undefined, req: IncomingMessage): boolean {
  return sessions === undefined || sessions.valid(req);
}

/** The request target as a URL, or undefined for one that is not a path (`//`, `//x:99999/`). */
function targetOf(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? "/", "http://inspector.invalid");
  } catch {
    return undefined;
  }
}

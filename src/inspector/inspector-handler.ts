/** @module The inspector over HTTP, for any host: the page, its script, its JSON API and its login, under one base path. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthThrottle } from "../pipeline/stages/authenticate.js";
import { compareRequests, curlLine } from "./inspector-actions.js";
import { answerView } from "./inspector-html-routes.js";
import { VIEW_CSS_SOURCE } from "./inspector-html-style.js";
import { inspectorAssets, inspectorPage } from "./inspector-page.js";
import { createInspectorSessions, type InspectorSessions } from "./inspector-session.js";
import type { InspectorFilter, InspectorSource } from "./inspector-source.js";

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

/** A login body is a key: anything longer is not one. */
const MAX_BODY_BYTES = 4096;

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(extra)) res.setHeader(name, value);
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, extra?: Record<string, string>): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), extra);
}

function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra?: Record<string, string>,
): void {
  sendJson(res, status, { error: { code, message } }, extra);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? {} : JSON.parse(text);
}

/** POSTs must say JSON: a form or a plain-text post from another site cannot, so SameSite is not the only guard. */
function isJson(req: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
}

function filterOf(params: URLSearchParams): InspectorFilter {
  const filter: InspectorFilter = {};
  const status = params.get("status");
  const hook = params.get("hook");
  const text = params.get("text");
  const limit = params.get("limit");
  const before = params.get("before");
  if (status) filter.status = status;
  if (hook) filter.hook = hook;
  if (text) filter.text = text;
  if (limit && /^\d+$/.test(limit)) filter.limit = Number(limit);
  if (before && /^\d+$/.test(before)) filter.before = Number(before);
  return filter;
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

  const loggedIn = (req: IncomingMessage) => sessions === undefined || sessions.valid(req);

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sessions) {
      sendJson(res, 200, { ok: true });
      return;
    }
    if (!isJson(req)) {
      sendError(res, 415, "UNSUPPORTED_MEDIA_TYPE", 'Send the key as JSON: {"key": "…"}.');
      return;
    }
    let key: unknown;
    try {
      key = ((await readJson(req)) as { key?: unknown } | null)?.key;
    } catch {
      sendError(res, 400, "BAD_REQUEST", 'Send the key as JSON: {"key": "…"}.');
      return;
    }
    const throttle = options.throttle?.();
    const { remoteAddress } = req.socket;
    if (typeof key !== "string" || !sessions.keyMatches(key)) {
      const retryAfter = await throttle?.failed(remoteAddress, req.headers);
      if (retryAfter !== undefined) {
        sendError(res, 429, "AUTH_THROTTLED", "Too many wrong keys from this address; retry later.", {
          "Retry-After": String(retryAfter),
        });
        return;
      }
      sendError(res, 401, "UNAUTHORIZED", "That is not the inspector's key.");
      return;
    }
    throttle?.succeeded(remoteAddress, req.headers);
    sendJson(res, 200, { ok: true }, { "Set-Cookie": sessions.open() });
  }

  async function api(
    req: IncomingMessage,
    res: ServerResponse,
    route: string,
    params: URLSearchParams,
  ): Promise<void> {
    const source = options.source();
    if (!source) {
      sendError(
        res,
        503,
        "INSPECTOR_UNAVAILABLE",
        "Hooks are disabled or not started: there is nothing to inspect.",
      );
      return;
    }
    const method = req.method ?? "GET";
    if (route === "/requests" && method === "GET") {
      sendJson(res, 200, { journaling: source.journaling, requests: await source.list(filterOf(params)) });
      return;
    }
    if (route === "/compare" && method === "GET") {
      const [a, b] = await Promise.all([
        source.detail(params.get("a") ?? ""),
        source.detail(params.get("b") ?? ""),
      ]);
      if (!a || !b) {
        sendError(res, 404, "NOT_FOUND", "One of the two requests is not known.");
        return;
      }
      sendJson(res, 200, compareRequests(a, b));
      return;
    }
    const match = /^\/requests\/([^/]+)(?:\/(dry-run|replay|fixture|curl))?$/.exec(route);
    if (!match) {
      sendError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
      return;
    }
    let id: string;
    try {
      id = decodeURIComponent(match[1]!);
    } catch {
      sendError(res, 404, "NOT_FOUND", "No request with this id.");
      return;
    }
    const action = match[2];
    const wants = action === "dry-run" || action === "replay" ? "POST" : "GET";
    if (method !== wants) {
      sendError(res, 405, "METHOD_NOT_ALLOWED", `Use ${wants} here.`, { Allow: wants });
      return;
    }
    if (wants === "POST" && !isJson(req)) {
      sendError(
        res,
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        "Actions are posted with Content-Type: application/json.",
      );
      return;
    }
    const notStored = () =>
      sendError(
        res,
        404,
        "NOT_FOUND",
        "No stored request with this id: only accepted requests with their body can be replayed or saved.",
      );
    switch (action) {
      case undefined: {
        const detail = await source.detail(id);
        if (detail) sendJson(res, 200, detail);
        else sendError(res, 404, "NOT_FOUND", "No request with this id.");
        return;
      }
      case "dry-run": {
        const report = await source.dryRun(id);
        if (report === undefined) notStored();
        else sendJson(res, 200, report);
        return;
      }
      case "replay": {
        const result = await source.replay(id);
        if (result === undefined) notStored();
        else sendJson(res, 200, result);
        return;
      }
      case "fixture": {
        const text = await source.fixture(id);
        if (text === undefined) notStored();
        else
          send(res, 200, "application/json5; charset=utf-8", text, {
            "Content-Disposition": `attachment; filename="${id.replace(/[^A-Za-z0-9._-]/g, "_")}.json5"`,
          });
        return;
      }
      case "curl": {
        const detail = await source.detail(id);
        if (detail) send(res, 200, "text/plain; charset=utf-8", curlLine(detail));
        else sendError(res, 404, "NOT_FOUND", "No request with this id.");
        return;
      }
    }
  }

  return async (req, res) => {
    const url = targetOf(req.url);
    // Not a path this handler could own (`//host`, say): left to the host, which answers it as it answers strangers.
    if (url === undefined) return false;
    const path = url.pathname;
    if (path !== base && !path.startsWith(`${base}/`)) return false;
    // Every answer below carries them, an error's too.
    for (const [name, value] of Object.entries(guard)) res.setHeader(name, value);
    const rest = path.slice(base.length);
    const method = req.method ?? "GET";
    try {
      if (pageKind === "server-rendered" && !rest.startsWith("/api/")) {
        const answer =
          method === "GET" || method === "HEAD"
            ? await answerView(options.source(), base, rest, url.searchParams)
            : undefined;
        if (answer) {
          send(res, answer.status, answer.type, answer.body);
          return true;
        }
        if (method !== "GET" && method !== "HEAD" && !rest.startsWith("/assets/")) {
          sendError(res, 405, "METHOD_NOT_ALLOWED", "These pages are read with GET.", { Allow: "GET, HEAD" });
          return true;
        }
      }
      if (rest === "" || rest === "/") {
        if (method !== "GET" && method !== "HEAD") {
          sendError(res, 405, "METHOD_NOT_ALLOWED", "The page is read with GET.", { Allow: "GET, HEAD" });
          return true;
        }
        const view = loggedIn(req) ? "app" : "login";
        const journaling = options.source()?.journaling ?? false;
        // The login form is not the page: a 401, so nothing mistakes it for a served inspector.
        send(
          res,
          view === "app" ? 200 : 401,
          "text/html; charset=utf-8",
          inspectorPage({ basePath: base, view, journaling }),
        );
        return true;
      }
      if (rest.startsWith("/assets/")) {
        const asset = assets.get(rest.slice("/assets/".length));
        if (!asset || (method !== "GET" && method !== "HEAD"))
          sendError(res, 404, "NOT_FOUND", "No such file.");
        else send(res, 200, asset.type, asset.body);
        return true;
      }
      if (rest === "/api/session") {
        if (method === "POST") await login(req, res);
        else if (method === "DELETE" && sessions)
          sendJson(res, 200, { ok: true }, { "Set-Cookie": sessions.close(req) });
        else sendError(res, 405, "METHOD_NOT_ALLOWED", "Log in with POST.", { Allow: "POST, DELETE" });
        return true;
      }
      if (rest.startsWith("/api/")) {
        if (!loggedIn(req)) {
          sendError(
            res,
            401,
            "UNAUTHORIZED",
            "Log in first: open the inspector: link that hooks serve printed.",
          );
          return true;
        }
        await api(req, res, rest.slice("/api".length), url.searchParams);
        return true;
      }
      sendError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
    } catch (error) {
      if (!res.headersSent)
        sendError(res, 500, "INTERNAL", `The inspector failed: ${(error as Error).message}`);
      else res.destroy();
    }
    return true;
  };
}

/** The request target as a URL, or undefined for one that is not a path (`//`, `//x:99999/`). */
function targetOf(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? "/", "http://inspector.invalid");
  } catch {
    return undefined;
  }
}

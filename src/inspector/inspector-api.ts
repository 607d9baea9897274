/** @module The inspector's JSON API below `<base>/api`: the list, a comparison, and one request's detail and actions. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { compareRequests, curlLine } from "./inspector-actions.js";
import { isJson, send, sendError, sendJson } from "./inspector-http-io.js";
import type { InspectorFilter, InspectorSource } from "./inspector-source.js";

/** What may follow `/requests/<id>`: nothing (the detail) or one action. */
type RequestAction = "dry-run" | "replay" | "fixture" | "curl" | undefined;

/** Answers `route` (the path below `/api`) for a logged-in caller; `source` is undefined while hooks are off. */
export async function answerApi(
  source: InspectorSource | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  params: URLSearchParams,
): Promise<void> {
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
    await answerCompare(source, res, params);
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
  const action = match[2] as RequestAction;
  if (refusesMethod(req, res, method, action)) return;
  await answerRequest(source, res, id, action);
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

async function answerCompare(
  source: InspectorSource,
  res: ServerResponse,
  params: URLSearchParams,
): Promise<void> {
  const [a, b] = await Promise.all([
    source.detail(params.get("a") ?? ""),
    source.detail(params.get("b") ?? ""),
  ]);
  if (!a || !b) {
    sendError(res, 404, "NOT_FOUND", "One of the two requests is not known.");
    return;
  }
  sendJson(res, 200, compareRequests(a, b));
}

/** Dry runs and replays are posted as JSON, everything else is read with GET: anything else is answered here. */
function refusesMethod(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  action: RequestAction,
): boolean {
  const wants = action === "dry-run" || action === "replay" ? "POST" : "GET";
  if (method !== wants) {
    sendError(res, 405, "METHOD_NOT_ALLOWED", `Use ${wants} here.`, { Allow: wants });
    return true;
  }
  if (wants === "POST" && !isJson(req)) {
    sendError(res, 415, "UNSUPPORTED_MEDIA_TYPE", "Actions are posted with Content-Type: application/json.");
    return true;
  }
  return false;
}

/** One request's detail, or one action on it: a dry run, a replay, its fixture file, its curl line. */
async function answerRequest(
  source: InspectorSource,
  res: ServerResponse,
  id: string,
  action: RequestAction,
): Promise<void> {
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

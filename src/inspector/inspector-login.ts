/** @module The inspector's login: POST /api/session exchanges the key for a session cookie, wrong keys counted per client. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthThrottle } from "../pipeline/credential-judge.js";
import { isJson, readJson, sendError, sendJson } from "./inspector-http-io.js";
import type { InspectorSessions } from "./inspector-session.js";

/** Without sessions (the host authenticated the request) there is nothing to log in to: the answer is ok. */
export async function login(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: InspectorSessions | undefined,
  throttleOf: (() => AuthThrottle | undefined) | undefined,
): Promise<void> {
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
  const throttle = throttleOf?.();
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

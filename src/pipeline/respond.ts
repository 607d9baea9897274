/** @module The respond stage's answers: JSON (or 204) with the request id and the stage's extra headers; errors from HookError only. */
import type { HookError } from "../errors.js";
import type { PipelineResponse } from "./request.js";

const JSON_TYPE = "application/json; charset=utf-8";

/** Headers beyond content and request id that an exchange collected on the way (Deprecation). */
export type ExtraHeaders = Record<string, string>;

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

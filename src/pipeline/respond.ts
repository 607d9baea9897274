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

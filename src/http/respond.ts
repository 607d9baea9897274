/** @module Writes the intake's responses: JSON or 204, each with its request id, in one writeHead; errors from HookError only. */
import type { ServerResponse } from "node:http";
import type { HookError } from "./errors.js";

const JSON_TYPE = "application/json; charset=utf-8";

/** Headers beyond the content headers and the request id (Deprecation, Allow, Retry-After, ...). */
export type ExtraHeaders = Record<string, string> | undefined;

// Every header goes through one writeHead: a setHeader before it sends Node down its slower merging path,
// a measurable share of a small request.
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  extra?: ExtraHeaders,
): void {
  const payload = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    "Content-Type": JSON_TYPE,
    "Content-Length": Buffer.byteLength(payload),
    "X-Request-Id": requestId,
  };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(payload);
}

export function sendNoContent(res: ServerResponse, requestId: string, extra?: ExtraHeaders): void {
  res.writeHead(204, extra ? { "X-Request-Id": requestId, ...extra } : { "X-Request-Id": requestId });
  res.end();
}

export function sendError(
  res: ServerResponse,
  error: HookError,
  requestId: string,
  extra?: ExtraHeaders,
): void {
  sendJson(
    res,
    error.status,
    error.toJSON(),
    requestId,
    extra && error.headers ? { ...extra, ...error.headers } : (extra ?? error.headers),
  );
}

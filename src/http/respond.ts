/** @module Writes the intake's responses: JSON with the request id, or 204; errors from HookError only. */
import type { ServerResponse } from "node:http";
import type { HookError } from "./errors.js";

const JSON_TYPE = "application/json; charset=utf-8";

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  const payload = JSON.stringify(body);
  // One writeHead instead of a setHeader per header: measurably cheaper on the hot path.
  const all: Record<string, string | number> = {
    "Content-Type": JSON_TYPE,
    "Content-Length": Buffer.byteLength(payload),
  };
  if (headers) Object.assign(all, headers);
  res.writeHead(status, all);
  res.end(payload);
}

export function sendNoContent(res: ServerResponse): void {
  res.statusCode = 204;
  res.end();
}

export function sendError(res: ServerResponse, error: HookError): void {
  sendJson(res, error.status, error.toJSON(), error.headers);
}

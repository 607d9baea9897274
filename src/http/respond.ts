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
  res.statusCode = status;
  res.setHeader("Content-Type", JSON_TYPE);
  res.setHeader("Content-Length", Buffer.byteLength(payload));
  if (headers) for (const name in headers) res.setHeader(name, headers[name]!);
  res.end(payload);
}

export function sendNoContent(res: ServerResponse): void {
  res.statusCode = 204;
  res.end();
}

export function sendError(res: ServerResponse, error: HookError): void {
  sendJson(res, error.status, error.toJSON(), error.headers);
}

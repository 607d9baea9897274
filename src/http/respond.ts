/**
 * @module Writes the intake's responses: JSON or 204, each with its request id, in one writeHead; errors from
 * HookError only. Responses leave together at the end of the event-loop turn.
 */
import type { ServerResponse } from "node:http";
import type { HookError } from "./errors.js";

const JSON_TYPE = "application/json; charset=utf-8";

/** Headers beyond the content headers and the request id (Deprecation, Allow, Retry-After, ...). */
export type ExtraHeaders = Record<string, string> | undefined;

// Under load one event-loop turn answers many requests. Ending them one by one, between the work of the
// next, woke the client side once per response, and on loopback that wake-up was a third of the CPU a small
// request cost; ended back to back at the end of the turn, a burst costs about one. The delay is that turn's
// remaining work, tens of microseconds.
let pending: Array<ServerResponse | string | undefined> = [];
let scheduled = false;

function endResponses(): void {
  scheduled = false;
  const batch = pending;
  pending = [];
  for (let i = 0; i < batch.length; i += 2) (batch[i] as ServerResponse).end(batch[i + 1]);
}

function endThisTurn(res: ServerResponse, payload: string | undefined): void {
  pending.push(res, payload);
  if (scheduled) return;
  scheduled = true;
  setImmediate(endResponses);
}

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
  endThisTurn(res, payload);
}

export function sendNoContent(res: ServerResponse, requestId: string, extra?: ExtraHeaders): void {
  res.writeHead(204, extra ? { "X-Request-Id": requestId, ...extra } : { "X-Request-Id": requestId });
  endThisTurn(res, undefined);
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

/** @module Reads a request body with a byte limit and a deadline, never buffering past the limit. */
import type { IncomingMessage } from "node:http";
import type { DeadlineSweeper } from "../deadline-sweeper.js";
import { HookError } from "./errors.js";

export function tooLarge(maxBytes: number): HookError {
  return new HookError(
    "PAYLOAD_TOO_LARGE",
    `The body is larger than the ${maxBytes}-byte limit for this hook.`,
  );
}

/** Refuses a declared Content-Length over the limit before a single byte is read. */
export function checkDeclaredLength(req: IncomingMessage, maxBytes: number): void {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
}

export type BodyCallback = (error: HookError | undefined, body: Buffer | undefined) => void;

/**
 * Calls `done` exactly once: with the body, or with the reason it was not read (413, 408, a broken stream).
 * A callback rather than a promise: a small request is answered in the turn its body arrives, without a
 * promise and a microtask per request. The caller checks the declared length first (`checkDeclaredLength`).
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  timeoutMs: number,
  deadlines: DeadlineSweeper,
  done: BodyCallback,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let settled = false;

  const fail = (error: HookError) => {
    if (settled) return;
    settled = true;
    deadlines.release(watched);
    // Stop pulling bytes: the caller answers and closes the connection instead of draining it.
    req.off("data", onData);
    req.pause();
    done(error, undefined);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) return fail(tooLarge(maxBytes));
    chunks.push(chunk);
  };
  const onEnd = () => {
    if (settled) return;
    settled = true;
    deadlines.release(watched);
    // Nothing keeps the chunks once the body is whole, however long the request lives afterwards.
    req.off("data", onData);
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
    chunks.length = 0;
    done(undefined, body);
  };
  // An aborted request is destroyed with an error, so "error" covers "aborted" too.
  const onError = () => fail(new HookError("INVALID_PAYLOAD", "The request body could not be read."));
  const watched = deadlines.watch(timeoutMs, () =>
    fail(new HookError("BODY_TIMEOUT", `The body was not fully received within ${timeoutMs} ms.`)),
  );

  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
}

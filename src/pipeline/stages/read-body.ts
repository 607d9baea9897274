/** @module The body stage: the bytes of a request whose credentials were accepted, under its hook's limit and deadline. */

import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { HookError, payloadTooLarge } from "../../errors.js";
import { need, type Stage } from "../stage.js";

export function createReadBodyStage(bodyTimeoutMs: number): Stage {
  return async function readBody(ctx) {
    if (ctx.raw !== undefined) return ctx; // a signed body, read and judged by the authentication stage
    const maxBytes = need(ctx.maxBytes, "the body limit");
    // Only here, once the credentials were accepted, is a declared length trusted to size a buffer up front.
    const declaredBytes = Number(ctx.request.headers["content-length"]);
    const limits = { maxBytes, timeoutMs: bodyTimeoutMs, declaredBytes };
    return { ...ctx, raw: await readLimitedBody(ctx.request.body, limits) };
  };
}

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
  /** Aborts the read (a stopping host): a 408, like a body that did not arrive in time. */
  signal?: AbortSignal | undefined;
  /** The Content-Length of an authenticated request: a large one is read into one buffer of that size. */
  declaredBytes?: number | undefined;
}

/** Refuses a declared Content-Length over the limit before a single byte is read. */
export function checkDeclaredLength(headers: IncomingHttpHeaders, maxBytes: number): void {
  const declared = headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) throw payloadTooLarge(maxBytes);
}

/**
 * The whole body, or a rejection: 413 as soon as the limit is crossed, 408 when the deadline passes, 400 when
 * the stream breaks. On a rejection it stops pulling bytes, so the caller answers and closes the connection
 * instead of draining an unbounded body.
 */
export function readLimitedBody(source: Readable, limits: BodyLimits): Promise<Buffer> {
  const { maxBytes, timeoutMs, signal, declaredBytes } = limits;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    // A large declared body is copied into one buffer as it arrives: collecting 30 MB of chunks and joining them at
    // the end held the event loop 0.2 s in one go (bench/PROFILE.md, "Hostile load").
    let whole = preallocated(declaredBytes, maxBytes);

    const detach = () => {
      clearTimeout(timer);
      source.off("data", onData);
      source.off("end", onEnd);
      source.off("error", onBroken);
      source.off("close", onBroken);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (error: unknown) => {
      detach();
      source.pause();
      chunks.length = 0;
      whole = undefined;
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      const at = received;
      received += chunk.length;
      if (received > maxBytes) fail(payloadTooLarge(maxBytes));
      else if (whole === undefined) chunks.push(chunk);
      else if (received <= whole.length) chunk.copy(whole, at);
      else {
        // More than it declared (only a broken client does that): collected like an undeclared body.
        chunks.push(whole.subarray(0, at), chunk);
        whole = undefined;
      }
    };
    const onEnd = () => {
      detach();
      if (whole !== undefined) resolve(whole.subarray(0, received));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    // An aborted upload ends in "error" or in "close" without "end"; either way the body is incomplete.
    const onBroken = () => fail(new HookError("INVALID_PAYLOAD", "The request body could not be read."));
    const onAbort = () =>
      fail(new HookError("BODY_TIMEOUT", "Reading the body was stopped before it was complete."));
    const timer = setTimeout(
      () => fail(new HookError("BODY_TIMEOUT", `The body was not fully received within ${timeoutMs} ms.`)),
      timeoutMs,
    );

    // A client that left before the read began: nothing more will arrive, so answer now, not at the deadline.
    if (source.destroyed || source.errored) return onBroken();
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    source.on("data", onData);
    source.on("end", onEnd);
    source.on("error", onBroken);
    source.on("close", onBroken);
  });
}

/** Above this many declared bytes the body is copied into one buffer as it arrives; below, chunks are joined at the end. */
export const PREALLOCATE_ABOVE_BYTES = 64 * 1024;

/** One buffer of the declared length, when it is large and within the limit. */
function preallocated(declared: number | undefined, maxBytes: number): Buffer | undefined {
  if (declared === undefined || !(declared > PREALLOCATE_ABOVE_BYTES && declared <= maxBytes))
    return undefined;
  return Buffer.allocUnsafe(declared);
}

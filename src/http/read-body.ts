/** @module Reads a request body with a byte limit and a deadline, never buffering past the limit. */
import type { IncomingMessage } from "node:http";
import { HookError } from "./errors.js";

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

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

export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  checkDeclaredLength(req, limits.maxBytes);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;

    const settle = (error: HookError | undefined, body?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
      if (error) {
        // Stop pulling bytes: the caller answers and closes the connection instead of draining it.
        req.pause();
        reject(error);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxBytes) return settle(tooLarge(limits.maxBytes));
      chunks.push(chunk);
    };
    const onEnd = () => settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    const onError = () => settle(new HookError("INVALID_PAYLOAD", "The request body could not be read."));
    const onAborted = onError;
    const timer = setTimeout(
      () =>
        settle(
          new HookError("BODY_TIMEOUT", `The body was not fully received within ${limits.timeoutMs} ms.`),
        ),
      limits.timeoutMs,
    );

    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

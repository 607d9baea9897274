/**
 * @module Calls a transform: a synchronous one answers at once, an asynchronous one gets a time limit, so a
 * transform that never settles fails its request, not the gateway.
 */
import type { DeadlineSweeper } from "../deadline-sweeper.js";
import type { HookTransform, TransformContext, TransformResult } from "./transform-types.js";

export const TRANSFORM_TIMEOUT_MS = 5_000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * The transform's output, or a promise of it bounded by `timeoutMs`. A synchronous throw is thrown, an
 * asynchronous failure rejects: the caller treats both as the mapping's failure.
 */
export function callTransform(
  transform: HookTransform,
  context: TransformContext,
  timeoutMs: number,
  deadlines: DeadlineSweeper,
): TransformResult | Promise<TransformResult> {
  const output = transform(context);
  if (!isThenable(output)) return output;
  return new Promise<TransformResult>((resolve, reject) => {
    const watched = deadlines.watch(timeoutMs, () =>
      reject(new Error(`transform did not finish within ${timeoutMs} ms`)),
    );
    Promise.resolve(output).then(
      (value) => {
        deadlines.release(watched);
        resolve(value);
      },
      (error: unknown) => {
        deadlines.release(watched);
        reject(error);
      },
    );
  });
}

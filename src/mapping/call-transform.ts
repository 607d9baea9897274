/** @module Calls a transform with a time limit; a transform that never settles fails the request, not the gateway. */
import type { HookTransform, TransformContext, TransformResult } from "./transform-types.js";

export const TRANSFORM_TIMEOUT_MS = 5_000;

export async function callTransform(
  transform: HookTransform,
  context: TransformContext,
  timeoutMs: number,
): Promise<TransformResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`transform did not finish within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([Promise.resolve().then(() => transform(context)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** @module The TransformRunner port, and its inline implementation: transforms called in the gateway's own thread, with a time limit. */
import { TransformLoader } from "./transform-loader.js";
import type { TransformContext, TransformRef, TransformResult } from "./transform-types.js";

export const TRANSFORM_TIMEOUT_MS = 5_000;

export interface TransformRunner {
  /** Loads the module and picks its export, so start-up warms the cache and `hooks check` sees load failures. */
  load(transform: TransformRef): Promise<void>;
  /** The transform's output; rejects when it throws, fails to load or does not settle within the time limit. */
  run(transform: TransformRef, context: TransformContext): Promise<TransformResult>;
  close(): Promise<void>;
}

export interface TransformRunnerSettings {
  transformsDir: string;
  timeoutMs: number;
  /** How often a loaded module's file is checked for changes; 0 checks on every call. */
  reloadCheckMs: number;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** Rejects when `pending` has not settled within `timeoutMs`, so a transform that never settles fails its request only. */
function withTimeout<T>(pending: PromiseLike<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`transform did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
}

/**
 * Runs transforms in this thread: cheap, but a transform that loops synchronously blocks the gateway while
 * it runs (only an asynchronous one can be stopped at its time limit).
 */
export function createInlineTransformRunner(settings: TransformRunnerSettings): TransformRunner {
  const loader = new TransformLoader(settings.transformsDir, settings.reloadCheckMs);
  return {
    async load(transform) {
      await loader.loadTransform(transform);
    },
    async run(transform, context) {
      const call = await loader.loadTransform(transform);
      const output = call(context);
      // A synchronous result needs no timer: there is nothing left to wait for.
      return isThenable(output) ? await withTimeout(output, settings.timeoutMs) : output;
    },
    async close() {},
  };
}

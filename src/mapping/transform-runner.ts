/** @module The TransformRunner port, and its inline implementation: transforms called in the gateway's own thread, with a time limit. */
import type { HostLogger } from "../host/contract.js";
import type { HookMetrics, TransformOutcome } from "../metrics/metrics.js";
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
  /** A worker's heap limit (`hooks.transforms.maxMemoryMb`). */
  maxMemoryMb: number;
  /** Variables a worker gets from the host's environment beside the base ones (`hooks.transforms.env`). */
  env?: readonly string[] | undefined;
  /** Workers in the pool; undefined lets the runner choose from the machine's parallelism. */
  maxWorkers?: number | undefined;
  metrics: HookMetrics;
  /** Where a worker that dies between requests is reported (a request's own failure is the engine's to log). */
  logger?: HostLogger | undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * Rejects when `pending` has not settled within `timeoutMs`, so a transform that never settles fails its request
 * only; `onExpiry` lets the caller count it as a timeout.
 */
function withTimeout<T>(pending: PromiseLike<T>, timeoutMs: number, onExpiry: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onExpiry();
      reject(new Error(`transform did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
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
      const started = performance.now();
      let outcome: TransformOutcome = "error";
      try {
        const call = await loader.loadTransform(transform);
        const output = call(context);
        // A synchronous result needs no timer: there is nothing left to wait for.
        const result = isThenable(output)
          ? await withTimeout(output, settings.timeoutMs, () => {
              outcome = "timeout";
            })
          : output;
        outcome = "ok";
        return result;
      } finally {
        settings.metrics.transform(context.mapping.id, outcome, (performance.now() - started) / 1000);
      }
    },
    async close() {},
  };
}

/** @module The default TransformRunner: each mapping's transform runs where its `isolate` says, in the worker pool or inline. */
import {
  createInlineTransformRunner,
  type TransformRunner,
  type TransformRunnerSettings,
} from "./transform-runner.js";
import { createWorkerTransformRunner } from "./worker-transform-runner.js";

export function createTransformRunner(settings: TransformRunnerSettings): TransformRunner {
  const runners = {
    worker: createWorkerTransformRunner(settings),
    inline: createInlineTransformRunner(settings),
  };
  return {
    load: (transform) => runners[transform.isolate].load(transform),
    run: (transform, context) => runners[transform.isolate].run(transform, context),
    async close() {
      await Promise.all([runners.worker.close(), runners.inline.close()]);
    },
  };
}

/** @module The transform worker: piscina calls its default export, in a worker thread, to load a transform module or run it. */
import { workerData } from "node:worker_threads";
import { errorMessage } from "../errors.js";
import { TransformLoader } from "./transform-loader.js";
import type { TransformContext, TransformRef, TransformResult } from "./transform-types.js";
import { guardTransformChildren } from "./worker-children.js";

/** What every worker of a pool is started with (piscina's `workerData`). */
export interface TransformWorkerData {
  transformsDir: string;
  reloadCheckMs: number;
  /** A transform's time limit, which also bounds a process it runs synchronously. */
  timeoutMs: number;
  /** The pool's part of the mark every process a transform starts carries in its environment. */
  childMark: string;
}

/** The context as it crosses the thread boundary: a Buffer arrives as a plain Uint8Array, so it travels as one. */
export type WireContext = Omit<TransformContext, "rawBody"> & { rawBody: Uint8Array };

/** Where a transform lives, without the gateway-side `isolate` choice. */
export type WireTransformRef = Omit<TransformRef, "isolate">;

/** Load a module (start-up, `hooks check`) or run a transform on one request's context. */
export type TransformTask = (
  | { kind: "load"; transform: WireTransformRef }
  | { kind: "run"; transform: WireTransformRef; context: WireContext }
) & {
  /** Set to 1 (and notified) when a worker picks the task up: the time limit starts then. */
  started: Int32Array;
};

/**
 * A transform's own failure (it threw, did not load, returned what cannot be cloned) comes back as data, so
 * the gateway side knows a rejected task means the worker itself died or was stopped.
 */
export type TransformReply = ({ ok: true; result: TransformResult } | { ok: false; message: string }) & {
  /** Errors thrown by work earlier transforms left behind (a timer, an un-awaited promise), for the log. */
  late?: LateError[];
};

/** A failure that surfaced after its transform had answered, with the mapping whose transform ran last. */
export interface LateError {
  mappingId: string | undefined;
  message: string;
}

/** Late errors kept between two replies; a transform that throws from a busy timer must not grow the worker. */
const MAX_LATE_ERRORS = 20;

/** A result that postMessage could not clone would crash the worker after the fact; this makes it the request's error. */
function checkCloneable(result: TransformResult): void {
  if (result === null || typeof result !== "object") return;
  try {
    structuredClone(result);
  } catch (error) {
    throw new Error(`transform returned a value that cannot leave its worker: ${errorMessage(error)}`);
  }
}

/** The task handler of one worker; its loader (jiti, the module cache) lives as long as the worker does. */
export function createTaskHandler(
  data: TransformWorkerData,
): (task: TransformTask) => Promise<TransformReply> {
  const loader = new TransformLoader(data.transformsDir, data.reloadCheckMs);
  // A worker started to replace a stopped one loads jiti before its first request rather than during it.
  loader.warm();
  // Work a transform leaves behind (a timer that throws, a promise nobody awaits) fails after its answer left.
  // Left alone it would kill this worker while it runs the next request, another mapping's perhaps: it is
  // kept instead and handed to the gateway with the next reply, for the log.
  let lastMappingId: string | undefined;
  let late: LateError[] = [];
  const keepLate = (error: unknown) => {
    if (late.length < MAX_LATE_ERRORS) late.push({ mappingId: lastMappingId, message: errorMessage(error) });
  };
  process.on("uncaughtException", keepLate);
  process.on("unhandledRejection", keepLate);
  const withLate = (reply: TransformReply): TransformReply => {
    if (late.length === 0) return reply;
    reply.late = late;
    late = [];
    return reply;
  };
  return async (task) => withLate(await handle(task));

  async function handle(task: TransformTask): Promise<TransformReply> {
    Atomics.store(task.started, 0, 1);
    Atomics.notify(task.started, 0);
    if (task.kind === "run") lastMappingId = task.context.mapping.id;
    try {
      const transform = await loader.loadTransform({ ...task.transform, isolate: "worker" });
      if (task.kind === "load") return { ok: true, result: undefined };
      const { rawBody, ...rest } = task.context;
      const result = await transform({
        ...rest,
        // A view, not a copy: the bytes already are this thread's own.
        rawBody: Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength),
      });
      checkCloneable(result);
      return { ok: true, result };
    } catch (error) {
      return { ok: false, message: errorMessage(error) };
    }
  }
}

const data = workerData as TransformWorkerData;
guardTransformChildren(data.timeoutMs, data.childMark);
export default createTaskHandler(data);

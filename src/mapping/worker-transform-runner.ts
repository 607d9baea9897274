/** @module The worker-pool TransformRunner: transforms run in worker threads (piscina), stopped at their time and memory limits. */

import { randomUUID } from "node:crypto";
import os from "node:os";
import { Piscina } from "piscina";
import { errorMessage } from "../errors.js";
import type { TransformOutcome } from "../metrics/metrics.js";
import { allowListedEnv } from "../safety/child-env.js";
import type { TransformRunner, TransformRunnerSettings } from "./transform-runner.js";
import type { TransformContext, TransformRef } from "./transform-types.js";
import type {
  TransformReply,
  TransformTask,
  TransformWorkerData,
  WireContext,
  WireTransformRef,
} from "./transform-worker.js";
import { endChildrenWithWorkers, type PoolChildren } from "./worker-children.js";

/**
 * How long start-up and `hooks check` give a module to load: compiling it in a fresh worker on a busy machine is
 * not a request's time, but a module that hangs at import must still not hang the start.
 */
const LOAD_LIMIT_MS = 30_000;

/**
 * Extra wait for a worker to pick a task up: right after a worker was stopped, the next request waits for its
 * replacement to start (a thread, jiti), which on a loaded machine takes longer than a short limit.
 */
const WORKER_START_MS = 2_000;

/** Workers beyond the first that stay idle this long are stopped; the first one stays, warm. */
export const WORKER_IDLE_MS = 30_000;

/** How many transforms run at once when `hooks.transforms.maxWorkers` is not set. */
export function defaultMaxWorkers(): number {
  return Math.max(2, os.availableParallelism());
}

/**
 * The file piscina starts in each worker. From the TypeScript sources (vitest, or a host that loads the plugin
 * with jiti) this module is a .ts file, and so is the worker's entry, which plain Node 20 cannot import: a small
 * .mjs entry loads it with jiti there. Built, the compiled transform-worker.js sits next to this file.
 */
function workerEntry(): string {
  const fromSource = import.meta.url.endsWith(".ts");
  return new URL(fromSource ? "./transform-worker-source.mjs" : "./transform-worker.js", import.meta.url)
    .href;
}

/**
 * V8 sizes the young generation (short-lived objects) from the heap limit; a sixteenth of the limit, within
 * 2-16 MB, keeps scavenges rare for a transform that builds a few objects per request.
 */
function youngGenerationMb(maxMemoryMb: number): number {
  return Math.min(16, Math.max(2, Math.round(maxMemoryMb / 16)));
}

/** Whether node was given a heap size, which V8 applies to every thread, over each worker's own limit. */
function heapFlagGiven(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  return flags.some((flag) => /^--max[-_]old[-_]space[-_]size\b/.test(flag));
}

/** A pool, and what ends the processes its transforms started. */
interface TransformPool {
  pool: Piscina<TransformTask, TransformReply>;
  children: PoolChildren;
}

function createPool(settings: TransformRunnerSettings): TransformPool {
  if (heapFlagGiven()) {
    settings.logger?.warn(
      `node runs with --max-old-space-size, which overrides hooks.transforms.maxMemoryMb (${settings.maxMemoryMb} MB) in every transform worker`,
    );
  }
  const workerData: TransformWorkerData = {
    transformsDir: settings.transformsDir,
    reloadCheckMs: settings.reloadCheckMs,
    timeoutMs: settings.timeoutMs,
    // Told apart from another pool's or another gateway's by a random part.
    childMark: randomUUID(),
  };
  const pool = new Piscina<TransformTask, TransformReply>({
    filename: workerEntry(),
    workerData,
    // Transforms read untrusted payloads: they see the allow-list and the names `hooks.transforms.env` adds.
    env: allowListedEnv(settings.env ?? [], process.env),
    minThreads: 1,
    maxThreads: settings.maxWorkers ?? defaultMaxWorkers(),
    idleTimeout: WORKER_IDLE_MS,
    // One transform per worker: stopping a worker at a limit must not take other requests' transforms with it.
    concurrentTasksPerWorker: 1,
    // Atomics would park an idle worker in Atomics.wait, freezing whatever a transform left running (a timer, a
    // socket) until the next task; messages keep an idle worker's event loop turning, as the gateway's does.
    atomics: "disabled",
    resourceLimits: {
      maxOldGenerationSizeMb: settings.maxMemoryMb,
      maxYoungGenerationSizeMb: youngGenerationMb(settings.maxMemoryMb),
    },
  });
  // A worker that dies with no task in flight (a transform's timer that threw after it answered) is reported
  // here; without a listener the pool's 'error' event would throw in the gateway's thread.
  pool.on("error", (error: unknown) => {
    const reason = errorCode(error) === "ERR_WORKER_OUT_OF_MEMORY" ? "memory" : "crash";
    settings.metrics.workerRestart(reason);
    settings.logger?.error(
      `a transform worker stopped between requests and was replaced: ${errorMessage(error)}`,
      {
        reason,
      },
    );
  });
  return { pool, children: endChildrenWithWorkers(pool, workerData.childMark) };
}

function errorCode(error: unknown): unknown {
  return error !== null && typeof error === "object" ? (error as { code?: unknown }).code : undefined;
}

function wireRef(transform: TransformRef): WireTransformRef {
  const ref: WireTransformRef = { file: transform.file, module: transform.module };
  if (transform.exportName !== undefined) ref.exportName = transform.exportName;
  return ref;
}

/**
 * The fields a transform is given, nothing else of the request. `rawBody` carries only the request's own bytes:
 * a small Buffer is usually a view into a shared 8 KB allocation, and a clone copies the whole allocation.
 */
function wireContext(context: TransformContext): WireContext {
  const raw = context.rawBody;
  const exact = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
  return {
    payload: context.payload,
    headers: context.headers,
    query: context.query,
    path: context.path,
    url: context.url,
    rawBody: exact ? raw : new Uint8Array(raw),
    mapping: { id: context.mapping.id },
    now: context.now,
  };
}

/** `Atomics.waitAsync` (ES2024, in Node since 16), typed here because the project's lib stops at ES2023. */
type WaitAsync = (
  view: Int32Array,
  index: number,
  value: number,
  timeoutMs: number,
) => { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** How one task ended, as the runner sees it from the gateway's side. */
type Settled =
  | { kind: "reply"; reply: TransformReply }
  /** Waited in the queue for a free worker past the limit; no worker was touched. */
  | { kind: "unstarted" }
  /** Ran past the limit; its worker was stopped. */
  | { kind: "timeout" }
  | { kind: "memory" }
  | { kind: "crash"; error: unknown };

/**
 * Runs one task under two limits: to be picked up by a worker within `timeoutMs` plus a worker's start-up (that
 * is not the transform's time), then to finish within `timeoutMs`. Aborting a running task makes piscina terminate its worker, which
 * stops even a synchronous loop, and start another in its place.
 */
async function runLimited(
  pool: Piscina<TransformTask, TransformReply>,
  task: TransformTask,
  timeoutMs: number,
): Promise<Settled> {
  const controller = new AbortController();
  let running = false;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const onPickup = (result: string) => {
    if (settled) return;
    if (result === "timed-out" && Atomics.load(task.started, 0) === 0) {
      controller.abort();
      return;
    }
    running = true;
    timer = setTimeout(() => controller.abort(), timeoutMs);
  };
  const pickup = waitAsync(task.started, 0, 0, timeoutMs + WORKER_START_MS);
  if (pickup.async) void pickup.value.then(onPickup);
  else onPickup(pickup.value);
  try {
    return { kind: "reply", reply: await pool.run(task, { signal: controller.signal }) };
  } catch (error) {
    if (controller.signal.aborted) return { kind: running ? "timeout" : "unstarted" };
    if (errorCode(error) === "ERR_WORKER_OUT_OF_MEMORY") return { kind: "memory" };
    return { kind: "crash", error };
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/** What one task gave: the outcome for the metrics, and the reply, or why there is none as an error for the log. */
interface Performed {
  outcome: TransformOutcome;
  reply?: TransformReply;
  error?: Error;
}

/** What `interpretSettled` needs besides the ending: the work's name and limit, and whether the runner was closed. */
interface SettledScope {
  /** Names the work in the error. */
  what: string;
  limitMs: number;
  /** The runner was closed while the task ran: a worker that stopped then was stopped by the close. */
  closed: boolean;
  settings: TransformRunnerSettings;
}

/**
 * Turns how a task ended into what it gave; counts each worker stopped at a limit or by a crash, and logs what a
 * transform's leftover work failed on after it answered.
 */
function interpretSettled(settled: Settled, { what, limitMs, closed, settings }: SettledScope): Performed {
  const { metrics } = settings;
  switch (settled.kind) {
    case "reply":
      for (const failure of settled.reply.late ?? []) {
        settings.logger?.warn(`a transform's leftover work failed after it answered: ${failure.message}`, {
          mappingId: failure.mappingId,
        });
      }
      return { outcome: settled.reply.ok ? "ok" : "error", reply: settled.reply };
    case "unstarted":
      return {
        outcome: "timeout",
        error: new Error(
          `${what} did not start within ${limitMs + WORKER_START_MS} ms: every transform worker was busy`,
        ),
      };
    case "timeout":
      metrics.workerRestart("timeout");
      return {
        outcome: "timeout",
        error: new Error(`${what} did not finish within ${limitMs} ms; its worker was stopped`),
      };
    case "memory":
      metrics.workerRestart("memory");
      return {
        outcome: "memory",
        error: new Error(
          `${what} exceeded its memory limit of ${settings.maxMemoryMb} MB; its worker was stopped`,
        ),
      };
    case "crash":
      if (closed) return { outcome: "error", error: new Error("the transform runner was closed") };
      metrics.workerRestart("crash");
      return {
        outcome: "error",
        error: new Error(`${what} stopped its worker, which was replaced: ${errorMessage(settled.error)}`),
      };
  }
}

const newFlag = () => new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));

/**
 * Runs `isolate: "worker"` transforms in a pool of worker threads: jiti, the module cache and hot reload live in
 * each worker; the context goes in and the result comes out by structured clone. The pool starts on first use,
 * so a config without worker transforms starts no thread.
 */
export function createWorkerTransformRunner(settings: TransformRunnerSettings): TransformRunner {
  const { timeoutMs, metrics } = settings;
  let pooled: TransformPool | undefined;
  let closed = false;

  /** The task's reply, or why it has none as an error for the log; `what` names the work in that error. */
  async function perform(task: TransformTask, what: string, limitMs: number): Promise<Performed> {
    if (closed) return { outcome: "error", error: new Error("the transform runner is closed") };
    pooled ??= createPool(settings);
    const settled = await runLimited(pooled.pool, task, limitMs);
    return interpretSettled(settled, { what, limitMs, closed, settings });
  }

  return {
    async load(transform) {
      // In a worker, as a request would: jiti warms up there, and `hooks check` sees what a worker would see.
      const task: TransformTask = { kind: "load", transform: wireRef(transform), started: newFlag() };
      const { reply, error } = await perform(
        task,
        `loading transform module ${transform.module}`,
        Math.max(timeoutMs, LOAD_LIMIT_MS),
      );
      if (error) throw error;
      if (reply && !reply.ok) throw new Error(reply.message);
    },
    async run(transform, context) {
      const begun = performance.now();
      const task: TransformTask = {
        kind: "run",
        transform: wireRef(transform),
        context: wireContext(context),
        started: newFlag(),
      };
      const { outcome, reply, error } = await perform(task, "transform", timeoutMs);
      metrics.transform(context.mapping.id, outcome, (performance.now() - begun) / 1000);
      if (error) throw error;
      if (!reply?.ok) throw new Error(reply?.message);
      return reply.result;
    },
    async close() {
      closed = true;
      await pooled?.pool.destroy();
      await pooled?.children.close();
    },
  };
}

/** @module The processes a transform starts: marked and noted in its worker as they start, ended from the gateway's side when that worker stops. */
import type { ChildProcess } from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { parentPort, threadId } from "node:worker_threads";
import type { Piscina } from "piscina";
import { CHILD_MARK_VARIABLE, endMarkedProcesses, markEntry } from "./marked-processes.js";

/**
 * What a worker posts when a transform starts a process, or when one it started is gone. Posted the moment it
 * happens, so the gateway knows the process even when the transform then loops until its worker is stopped.
 * `pid` is absent for a process run synchronously: its call has returned, but what it left running has the mark.
 */
interface ChildNotice {
  hooksTransformChild: { threadId: number; pid?: number; gone: boolean };
}

function isChildNotice(message: unknown): message is ChildNotice {
  const notice = (message as Partial<ChildNotice> | null)?.hooksTransformChild;
  return typeof notice?.threadId === "number" && (notice.pid === undefined || typeof notice.pid === "number");
}

/** A worker's mark: its pool's and its own thread's, so one worker's processes are told from another's. */
function workerMark(poolMark: string, worker: number): string {
  return `${poolMark}:${worker}`;
}

/** A child is started as the leader of its own process group (POSIX), so ending the group ends its children too. */
const GROUPS = process.platform !== "win32";

function groupAlive(pid: number): boolean {
  try {
    process.kill(GROUPS ? -pid : pid, 0);
    return true;
  } catch {
    return false;
  }
}

function endGroup(pid: number): void {
  try {
    process.kill(GROUPS ? -pid : pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

type SyncSpawn = (...args: unknown[]) => unknown;

/**
 * The arguments of a `spawnSync`/`execSync`/`execFileSync` call with its timeout at most `limitMs` and the mark in
 * its environment: the options object is the last argument when there is one.
 */
function boundedSyncArgs(args: unknown[], limitMs: number, mark: string): unknown[] {
  const last = args.at(-1);
  const hasOptions = args.length > 1 && (last == null || (typeof last === "object" && !Array.isArray(last)));
  const options = hasOptions ? { ...(last as object | null | undefined) } : {};
  const given = (options as { timeout?: unknown }).timeout;
  if (typeof given !== "number" || given <= 0 || given > limitMs) {
    Object.assign(options, { timeout: limitMs, killSignal: "SIGKILL" });
  }
  const env = (options as { env?: NodeJS.ProcessEnv | null }).env ?? process.env;
  Object.assign(options, { env: { ...env, [CHILD_MARK_VARIABLE]: mark } });
  return hasOptions ? [...args.slice(0, -1), options] : [...args, options];
}

/** The environment a child is started with (`NAME=value` pairs, as Node hands them over), its mark set. */
function withMark(envPairs: string[] | undefined, mark: string): string[] {
  const prefix = `${CHILD_MARK_VARIABLE}=`;
  return [...(envPairs ?? []).filter((pair) => !pair.startsWith(prefix)), markEntry(mark)];
}

/**
 * In a worker, before any transform loads: every process a transform starts (spawn, exec, execFile, fork all
 * pass through `ChildProcess.prototype.spawn`) leads its own process group, carries this worker's mark in its
 * environment and is reported to the gateway, which ends the group and every marked process when this worker
 * stops. A synchronous child holds the thread, so the worker cannot be stopped while it runs: its timeout is
 * bounded by the transform's time limit instead. This is for robustness (a stopped transform leaves nothing
 * running), not a sandbox: code in a transform can still get around it (a child that clears its environment).
 */
export function guardTransformChildren(syncLimitMs: number, poolMark: string): void {
  const port = parentPort;
  if (port === null) return;
  const mark = workerMark(poolMark, threadId);
  const require = createRequire(import.meta.url);
  const childProcess = require("node:child_process") as Record<string, unknown> & {
    ChildProcess: {
      prototype: ChildProcess & { spawn(options: { detached?: boolean; envPairs?: string[] }): unknown };
    };
  };
  const notify = (pid: number | undefined, gone: boolean) => {
    const notice: ChildNotice = {
      hooksTransformChild: { threadId, gone, ...(pid !== undefined && { pid }) },
    };
    port.postMessage(notice);
  };
  const prototype = childProcess.ChildProcess.prototype;
  const spawn = prototype.spawn;
  prototype.spawn = function (this: ChildProcess, options) {
    if (GROUPS) options.detached = true;
    options.envPairs = withMark(options.envPairs, mark);
    const result = spawn.call(this, options);
    const pid = this.pid;
    if (pid !== undefined) {
      notify(pid, false);
      // A group whose leader exited may still hold its children: the gateway keeps it until the worker stops.
      this.once("exit", () => {
        if (!groupAlive(pid)) notify(pid, true);
      });
    }
    return result;
  };
  for (const name of ["spawnSync", "execSync", "execFileSync"]) {
    const original = childProcess[name] as SyncSpawn;
    childProcess[name] = function (this: unknown, ...args: unknown[]) {
      notify(undefined, false);
      return original.apply(this, boundedSyncArgs(args, syncLimitMs, mark));
    };
  }
  // `import { execSync } from "node:child_process"` in an ES module sees the bounded one too.
  syncBuiltinESMExports();
}

/** What the gateway's side of a pool is left with once the pool is destroyed. */
export interface PoolChildren {
  /** Resolves once every process the pool's transforms started has been ended (run after the pool's destroy). */
  close(): Promise<void>;
}

/**
 * On the gateway's side of a pool: the process groups each worker's transforms started, and every process carrying
 * that worker's mark, ended (SIGKILL) when that worker stops for any reason (time or memory limit, crash, idle,
 * the pool's close). Only a worker that started a process costs a look through /proc.
 */
export function endChildrenWithWorkers(pool: Piscina, poolMark: string): PoolChildren {
  const byWorker = new Map<number, Set<number>>();
  const started = new Set<number>();
  let anyStarted = false;
  const sweeps = new Set<Promise<void>>();
  const sweep = (matches: (value: string) => boolean) => {
    const done = endMarkedProcesses(matches).finally(() => sweeps.delete(done));
    sweeps.add(done);
  };
  const endWorker = (worker: number, groups: Iterable<number>) => {
    for (const pid of groups) endGroup(pid);
    const mark = workerMark(poolMark, worker);
    sweep((value) => value === mark);
  };
  pool.on("message", (message: unknown) => {
    if (!isChildNotice(message)) return;
    const { threadId: worker, pid, gone } = message.hooksTransformChild;
    anyStarted = true;
    if (gone) {
      if (pid !== undefined) byWorker.get(worker)?.delete(pid);
      return;
    }
    // Its worker already stopped (the notice crossed its stop): nothing is left to end it later.
    if (!pool.threads.some((thread) => thread.threadId === worker)) {
      endWorker(worker, pid === undefined ? [] : [pid]);
      return;
    }
    started.add(worker);
    if (pid === undefined) return;
    const pids = byWorker.get(worker) ?? new Set<number>();
    byWorker.set(worker, pids.add(pid));
  });
  pool.on("workerDestroy", (worker: { id: number }) => {
    const pids = byWorker.get(worker.id);
    byWorker.delete(worker.id);
    if (started.delete(worker.id)) endWorker(worker.id, pids ?? []);
  });
  return {
    async close() {
      await Promise.all(sweeps);
      // A last look over the whole pool: a process forked by one that its worker's look found as it was ending.
      if (anyStarted) await endMarkedProcesses((value) => value.startsWith(`${poolMark}:`));
    },
  };
}

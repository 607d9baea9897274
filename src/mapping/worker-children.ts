/** @module The processes a transform starts: noted in its worker as they start, ended from the gateway's side when that worker stops. */
import type { ChildProcess } from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { parentPort, threadId } from "node:worker_threads";
import type { Piscina } from "piscina";

/**
 * What a worker posts when a transform starts a process, or when one it started is gone. Posted the moment it
 * happens, so the gateway knows the process even when the transform then loops until its worker is stopped.
 */
interface ChildNotice {
  hooksTransformChild: { threadId: number; pid: number; gone: boolean };
}

function isChildNotice(message: unknown): message is ChildNotice {
  const notice = (message as Partial<ChildNotice> | null)?.hooksTransformChild;
  return typeof notice?.pid === "number" && typeof notice.threadId === "number";
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
 * The arguments of a `spawnSync`/`execSync`/`execFileSync` call with its timeout at most `limitMs`: the options
 * object is the last argument when there is one.
 */
function boundedSyncArgs(args: unknown[], limitMs: number): unknown[] {
  const last = args.at(-1);
  const hasOptions = args.length > 1 && (last == null || (typeof last === "object" && !Array.isArray(last)));
  const options = hasOptions ? { ...(last as object | null | undefined) } : {};
  const given = (options as { timeout?: unknown }).timeout;
  if (typeof given !== "number" || given <= 0 || given > limitMs) {
    Object.assign(options, { timeout: limitMs, killSignal: "SIGKILL" });
  }
  return hasOptions ? [...args.slice(0, -1), options] : [...args, options];
}

/**
 * In a worker, before any transform loads: every process a transform starts (spawn, exec, execFile, fork all
 * pass through `ChildProcess.prototype.spawn`) leads its own process group and is reported to the gateway,
 * which ends the group when this worker stops. A synchronous child holds the thread, so the worker cannot be
 * stopped while it runs: its timeout is bounded by the transform's time limit instead. This is for robustness
 * (a stopped transform leaves nothing running), not a sandbox: code in a transform can still get around it.
 */
export function guardTransformChildren(syncLimitMs: number): void {
  const port = parentPort;
  if (port === null) return;
  const require = createRequire(import.meta.url);
  const childProcess = require("node:child_process") as Record<string, unknown> & {
    ChildProcess: { prototype: ChildProcess & { spawn(options: { detached?: boolean }): unknown } };
  };
  const notify = (pid: number, gone: boolean) => {
    const notice: ChildNotice = { hooksTransformChild: { threadId, pid, gone } };
    port.postMessage(notice);
  };
  const prototype = childProcess.ChildProcess.prototype;
  const spawn = prototype.spawn;
  prototype.spawn = function (this: ChildProcess, options) {
    if (GROUPS) options.detached = true;
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
      return original.apply(this, boundedSyncArgs(args, syncLimitMs));
    };
  }
  // `import { execSync } from "node:child_process"` in an ES module sees the bounded one too.
  syncBuiltinESMExports();
}

/**
 * On the gateway's side of a pool: the process groups each worker's transforms started, ended (SIGKILL) when that
 * worker stops for any reason (time or memory limit, crash, idle, the pool's close).
 */
export function endChildrenWithWorkers(pool: Piscina): void {
  const byWorker = new Map<number, Set<number>>();
  pool.on("message", (message: unknown) => {
    if (!isChildNotice(message)) return;
    const { threadId: worker, pid, gone } = message.hooksTransformChild;
    if (gone) {
      byWorker.get(worker)?.delete(pid);
      return;
    }
    // Its worker already stopped (the notice crossed its stop): nothing is left to end it later.
    if (!pool.threads.some((thread) => thread.threadId === worker)) {
      endGroup(pid);
      return;
    }
    const pids = byWorker.get(worker) ?? new Set<number>();
    byWorker.set(worker, pids.add(pid));
  });
  pool.on("workerDestroy", (worker: { id: number }) => {
    const pids = byWorker.get(worker.id);
    byWorker.delete(worker.id);
    for (const pid of pids ?? []) endGroup(pid);
  });
}

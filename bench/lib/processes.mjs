/** @module Child processes of the bench: spawn (pinned to the server's core), wait for the ready line, clean up on any exit. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { nodeCommand, PIN } from "./pinning.mjs";

export { readCpuMs, readRss } from "./proc.mjs";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The CLI the gateway runs from; BENCH_HOOKS_BIN points the bench at another checkout (before/after a change). */
export const HOOKS_BIN = process.env.BENCH_HOOKS_BIN ?? path.join(ROOT, "bin", "hooks.js");
const READY_TIMEOUT_MS = 60_000;
/** What is kept of a server's stdout from its stop on, at most: the last part, where the closing log lines are. */
const STOP_OUTPUT_MAX = 1_000_000;
const STOP_TIMEOUT_MS = 15_000;

const children = new Set();
const tempDirs = new Set();

function cleanupSync() {
  for (const child of children) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

// Whatever ends the bench (error, Ctrl-C, a kill), no gateway or baseline server and no temp dir outlives it.
process.on("exit", cleanupSync);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping child processes\n`);
    cleanupSync();
    process.exit(130);
  });
}

export function makeTempDir(label) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `hooks-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/**
 * Spawns a server process on the server's core and resolves once it prints `listening on http://...` on stdout.
 * After that, stdout is drained (the gateway logs there) and only counted.
 */
export function spawnServer({ label, args, env = {}, nodeArgs = [], cwd = ROOT }) {
  const started = performance.now();
  const { command, args: commandArgs } = nodeCommand(PIN.serverCpu, [...nodeArgs, ...args]);
  const child = spawn(command, commandArgs, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  let outBytes = 0;
  let outLines = 0;
  let ready = false;
  // From the stop signal on, stdout is kept (bounded): the closing lines (the journal's counters) come then.
  let stopOutput;
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });

  const handle = {
    label,
    child,
    pid: child.pid,
    url: "",
    readyMs: 0,
    exited,
    get stdoutBytes() {
      return outBytes;
    },
    get stdoutLines() {
      return outLines;
    },
    get stderr() {
      return stderr;
    },
    /** What the server wrote on stdout after `stop` sent its signal (its closing log lines); "" before. */
    get stopOutput() {
      return stopOutput ?? "";
    },
    /** SIGTERM (graceful stop), then SIGKILL if it has not exited in time. */
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      stopOutput ??= "";
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };

  return new Promise((resolve, reject) => {
    const fail = (message) => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `${label}: ${message}\n--- stdout ---\n${stdout.slice(-2000)}\n--- stderr ---\n${stderr.slice(-4000)}`,
        ),
      );
    };
    const timer = setTimeout(() => fail(`not ready within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      outBytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) outLines++;
      if (stopOutput !== undefined) {
        stopOutput += chunk.toString("utf8");
        // The closing lines come last: what is dropped past the bound is the front.
        if (stopOutput.length > STOP_OUTPUT_MAX) stopOutput = stopOutput.slice(-STOP_OUTPUT_MAX);
      }
      if (ready) return;
      stdout += chunk.toString("utf8");
      // Host and port only: a JSON log line would otherwise lend the URL its closing quote.
      const match = /listening on (http:\/\/[\w.:[\]-]+)/.exec(stdout);
      if (match) {
        ready = true;
        handle.readyMs = performance.now() - started;
        handle.url = match[1];
        clearTimeout(timer);
        resolve(handle);
      }
    });
    child.stderr.on("data", (chunk) => {
      if (stderr.length < 64_000) stderr += chunk.toString("utf8");
    });
    child.once("error", (error) => fail(`spawn failed: ${error.message}`));
    void exited.then(({ code, signal }) => {
      if (!ready) {
        clearTimeout(timer);
        fail(`exited before ready (code ${code}, signal ${signal})`);
      }
    });
  });
}

/** `hooks serve` through the real CLI, on a free port, with its own state directory and no event record. */
export function spawnGateway({ label, configFile, stateDir, env = {}, nodeArgs = [], bin = HOOKS_BIN }) {
  return spawnServer({
    label,
    nodeArgs,
    env,
    args: [bin, "serve", "--config", configFile, "--port", "0", "--state-dir", stateDir],
  });
}

/**
 * The bare baseline, or with `journalFile` the durable one (a JSON line per request in that file, answers after
 * the group commit's fdatasync): bench/baseline-server.mjs.
 */
export function spawnBaseline({ token, maxBodyBytes = 262_144, journalFile }) {
  return spawnServer({
    label: journalFile ? "durable baseline" : "baseline",
    args: [path.join(ROOT, "bench", "baseline-server.mjs")],
    env: {
      BENCH_BASELINE_TOKEN: token,
      BENCH_BASELINE_MAX_BYTES: String(maxBodyBytes),
      ...(journalFile ? { BENCH_BASELINE_JOURNAL: journalFile } : {}),
    },
  });
}

/**
 * The JSON log lines of `output` whose `msg` is `msg`, parsed (the gateway logs one JSON object per line; the
 * banner and anything else are skipped).
 */
export function logLines(output, msg) {
  const found = [];
  for (const line of output.split("\n")) {
    if (!line.startsWith("{") || !line.includes(msg)) continue;
    try {
      const parsed = JSON.parse(line);
      if (parsed.msg === msg) found.push(parsed);
    } catch {
      // A line cut by the bound, or not JSON.
    }
  }
  return found;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

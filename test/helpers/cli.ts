/** @module Runs the `hooks` CLI for tests: in this process through `main(argv)` (the default), or as a real process (bin/hooks.js on the built dist/) for the smoke tests that need one; waits on output, cleans up after a test. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { main } from "../../src/cli/main.js";
import { REPO_ROOT } from "./repo.js";

export const ROOT = REPO_ROOT;
export const BIN = path.join(ROOT, "bin/hooks.js");
const READY = /listening on (http:\/\/\S+)/;
const DEFAULT_WAIT_MS = 10_000;
/**
 * How long a gateway may take to say it listens: a deadline, not a pause (the wait ends at the ready line). A doc
 * page's gateway took over 10 s beside a full run and another CPU-bound job.
 */
const READY_WAIT_MS = 30_000;
/** What a spawned CLI gets on top of this process's environment; an in-process run gets the same. */
const BASE_ENV = { HOOKS_LOG_LEVEL: "info" };

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunOptions {
  cwd?: string;
  /** Set on top of this process's environment; `undefined` unsets a variable. */
  env?: Record<string, string | undefined>;
  /** Run as if a person read stdout (a terminal), for output that differs there; in-process runs only. */
  terminal?: boolean;
}

export interface CliRun {
  stdout(): string;
  stderr(): string;
  /** stdout lines that are JSON log records (the CLI logs JSON lines when stdout is not a TTY). */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the first match in stdout, as soon as it appears; rejects on exit or after the wait. */
  waitFor(pattern: RegExp, waitMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the first JSON log record that passes `where`. */
  waitForLog(
    where: (record: Record<string, unknown>) => boolean,
    waitMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<Exit>;
  /**
   * A real process gets the signal. In-process, SIGINT and SIGTERM stop `hooks serve` the way the signal would
   * (graceful stop, exit code 0); other signals are for real processes only.
   */
  signal(signal: NodeJS.Signals): void;
}

export interface CliProcess extends CliRun {
  child: ChildProcess;
}

export interface Serve extends CliRun {
  /** The base URL from the ready line, with the real bound port. */
  url: string;
}

export interface ServeProcess extends CliProcess, Serve {}

const live = new Set<ChildProcess>();
const inProcess = new Set<{ stop(): void; exited: Promise<Exit> }>();
const tempDirs: string[] = [];

export function makeTempDir(prefix = "hooks-test-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * For afterEach: stops every in-process gateway, kills every child still running (by its pid) and removes every
 * temp dir made since the last call.
 */
export async function cleanupCli(): Promise<void> {
  const runs = [...inProcess];
  inProcess.clear();
  for (const run of runs) run.stop();
  await Promise.all(runs.map((run) => run.exited));
  const children = [...live];
  live.clear();
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function parseLogs(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A banner line that happens to start with a brace, or a line still being written.
    }
  }
  return out;
}

/** Output collected as it is written, with the waits built on it; `ended()` says the CLI has exited. */
function watchOutput(ended: () => boolean) {
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };

  function until<T>(test: () => T | undefined, what: string, waitMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = test();
        if (found !== undefined) {
          done();
          resolve(found);
        } else if (ended()) {
          done();
          reject(new Error(`CLI exited before ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${waitMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      }, waitMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  }

  return {
    addStdout(chunk: Buffer | string) {
      stdout += chunk.toString();
      changed();
    },
    addStderr(chunk: Buffer | string) {
      stderr += chunk.toString();
    },
    changed,
    view: {
      stdout: () => stdout,
      stderr: () => stderr,
      logs: () => parseLogs(stdout),
      waitFor: (pattern: RegExp, waitMs = DEFAULT_WAIT_MS) =>
        until(() => stdout.match(pattern) ?? undefined, `${pattern}`, waitMs),
      waitForLog: (where: (record: Record<string, unknown>) => boolean, waitMs = DEFAULT_WAIT_MS) =>
        until(() => parseLogs(stdout).find(where), `log record matching ${where.toString()}`, waitMs),
    },
  };
}

/** The real CLI as a child process. */
export function spawnCli(args: readonly string[], options: RunOptions = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...BASE_ENV, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  const output = watchOutput(() => child.exitCode !== null || child.signalCode !== null);
  child.stdout?.on("data", output.addStdout);
  child.stderr?.on("data", output.addStderr);
  const exited = new Promise<Exit>((resolve) => {
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
      output.changed();
    });
  });
  return {
    child,
    ...output.view,
    exited,
    signal: (signal) => {
      child.kill(signal);
    },
  };
}

/** Runs a CLI command to completion as a real process. */
export async function runCliProcess(
  args: readonly string[],
  options: RunOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnCli(args, options);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** `hooks serve --port 0 ...` as a real process, resolved once the ready line names the bound URL. */
export async function startServeProcess(
  args: readonly string[],
  options: RunOptions = {},
): Promise<ServeProcess> {
  const cli = spawnCli(["serve", "--port", "0", ...args], options);
  const [, url] = await cli.waitFor(READY, READY_WAIT_MS);
  return { ...cli, url: url! };
}

/**
 * The working directory and environment of in-process runs. Overlapping runs stack: each sees this process's
 * environment with every active run's variables on top (the latest wins), and its own directory (the latest
 * run's). What a run changed is put back when no active run still sets it.
 */
interface Layer {
  cwd: string;
  env: Record<string, string | undefined>;
}
const layers: Layer[] = [];
const originalEnv = new Map<string, string | undefined>();
let originalCwd: string | undefined;

function applyLayers(): void {
  const touched = new Set<string>(originalEnv.keys());
  for (const layer of layers) for (const name of Object.keys(layer.env)) touched.add(name);
  for (const name of touched) {
    if (!originalEnv.has(name)) originalEnv.set(name, process.env[name]);
    const setBy = layers.findLast((layer) => Object.hasOwn(layer.env, name));
    const value = setBy ? setBy.env[name] : originalEnv.get(name);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    if (!setBy) originalEnv.delete(name);
  }
  originalCwd ??= process.cwd();
  process.chdir(layers.at(-1)?.cwd ?? originalCwd);
  if (layers.length === 0) originalCwd = undefined;
}

function enter(options: RunOptions): () => void {
  const layer: Layer = { cwd: options.cwd ?? ROOT, env: { ...BASE_ENV, ...options.env } };
  layers.push(layer);
  applyLayers();
  return () => {
    layers.splice(layers.indexOf(layer), 1);
    applyLayers();
  };
}

function capture(write: (chunk: Buffer | string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      write(chunk);
      callback();
    },
  });
}

/** `main(argv)` in this process with its output captured; `stop` ends a `hooks serve` it starts. */
function startInProcess(args: readonly string[], options: RunOptions) {
  let ended = false;
  const output = watchOutput(() => ended);
  let stop!: (reason: string) => void;
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const leave = enter(options);
  const exited = main(args, {
    stdout: capture(output.addStdout),
    stderr: capture(output.addStderr),
    stop: stopped,
    ...(options.terminal !== undefined && { terminal: options.terminal }),
  })
    .catch((error: unknown) => {
      output.addStderr(`main threw: ${(error as Error).stack ?? String(error)}\n`);
      return 1;
    })
    .then((code): Exit => {
      ended = true;
      leave();
      output.changed();
      return { code, signal: null };
    });
  return { output, exited, stop };
}

/** Runs a CLI command to completion in this process. */
export async function runCli(
  args: readonly string[],
  options: RunOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startInProcess(args, options);
  const { code } = await run.exited;
  return { code, stdout: run.output.view.stdout(), stderr: run.output.view.stderr() };
}

/**
 * `hooks serve --port 0 ...` in this process, resolved once the ready line names the bound URL. Its working
 * directory and environment stay in force until it stops (a runner reads the environment when it runs).
 */
export async function startServe(args: readonly string[], options: RunOptions = {}): Promise<Serve> {
  const run = startInProcess(["serve", "--port", "0", ...args], options);
  const entry = { stop: () => run.stop("stop"), exited: run.exited };
  inProcess.add(entry);
  void run.exited.then(() => inProcess.delete(entry));
  const [, url] = await run.output.view.waitFor(READY, READY_WAIT_MS);
  return {
    ...run.output.view,
    url: url!,
    exited: run.exited,
    signal: (signal) => {
      if (signal !== "SIGINT" && signal !== "SIGTERM") {
        throw new Error(`${signal} needs a real process: use startServeProcess`);
      }
      run.stop(signal);
    },
  };
}

/** Polls `read` until it returns a value, for state that has no event to wait on. */
export async function pollFor<T>(
  read: () => T | undefined,
  what: string,
  waitMs = 5_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

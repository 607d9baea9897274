/** @module Spawns the real `hooks` CLI (bin/hooks.js on the built dist/), waits on its output, cleans up after a test. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = path.join(ROOT, "bin/hooks.js");
const READY = /listening on (http:\/\/\S+)/;
const DEFAULT_WAIT_MS = 10_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcess {
  child: ChildProcess;
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
  signal(signal: NodeJS.Signals): void;
}

export interface ServeProcess extends CliProcess {
  /** The base URL from the ready line, with the real bound port. */
  url: string;
}

const live = new Set<ChildProcess>();
const tempDirs: string[] = [];

export function makeTempDir(prefix = "hooks-test-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** For afterEach: kills every child still running and removes every temp dir made since the last call. */
export async function cleanupCli(): Promise<void> {
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

export function spawnCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, HOOKS_LOG_LEVEL: "info", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of [...listeners]) listener();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
      for (const listener of [...listeners]) listener();
    });
  });

  function until<T>(test: () => T | undefined, what: string, waitMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = test();
        if (found !== undefined) {
          done();
          resolve(found);
        } else if (child.exitCode !== null || child.signalCode !== null) {
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
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    logs: () => parseLogs(stdout),
    waitFor: (pattern, waitMs = DEFAULT_WAIT_MS) =>
      until(() => stdout.match(pattern) ?? undefined, `${pattern}`, waitMs),
    waitForLog: (where, waitMs = DEFAULT_WAIT_MS) =>
      until(() => parseLogs(stdout).find(where), `log record matching ${where.toString()}`, waitMs),
    exited,
    signal: (signal) => {
      child.kill(signal);
    },
  };
}

/** Runs a CLI command to completion. */
export async function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnCli(args, options);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** `hooks serve --port 0 ...`, resolved once the ready line names the bound URL. */
export async function startServe(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ServeProcess> {
  const cli = spawnCli(["serve", "--port", "0", ...args], options);
  const [, url] = await cli.waitFor(READY);
  return { ...cli, url: url! };
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

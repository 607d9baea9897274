/** @module Test harness: a throwaway redis-server on a free loopback port, persistence off, stopped (and restarted) by its PID. */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "../../scripts/openclaw-launch.mjs";
import { findBinary, REDIS, skipReason } from "./test-servers.js";

/**
 * Whether the Redis suites run. Locally a missing redis-server skips them with the returned reason; in CI (`CI`
 * set) they always run, so a missing server fails loudly instead of passing silently.
 */
export function redisSkipReason(): string | undefined {
  return skipReason(REDIS);
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** The running server's PID, undefined while stopped. */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM by PID, then SIGKILL) and waits for it to exit; its data is gone (no persistence). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  log(): string;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  // Last resort when a test run dies without its afterAll: never leave a redis-server behind.
  for (const child of live) child.kill("SIGKILL");
});

/** `args`: more of the server's options (`["--maxmemory-policy", "allkeys-lru"]`). */
export async function startRedis(options: { args?: readonly string[] } = {}): Promise<RedisServer> {
  const binary = findBinary(REDIS.binary);
  if (binary === undefined) throw new Error(redisSkipReason() ?? "redis-server is not installed");
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = "";

  const start = async () => {
    output = "";
    const args = [
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ...(options.args ?? []),
    ];
    // Run from /tmp: with persistence off nothing is written, but the server's working directory must exist.
    const started = spawn(binary, [...args, "--dir", "/tmp"], { stdio: ["ignore", "pipe", "pipe"] });
    child = started;
    live.add(started);
    started.once("exit", () => live.delete(started));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        started.kill("SIGKILL");
        reject(new Error(`redis-server did not get ready within 15 s:\n${output}`));
      }, 15_000);
      started.once("exit", () => clearTimeout(timer));
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout?.on("data", onData);
      started.stderr?.on("data", onData);
      started.once("exit", (code, signal) =>
        reject(new Error(`redis-server exited during start-up (${code ?? signal}):\n${output}`)),
      );
    });
  };

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    const killer = setTimeout(() => running.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killer);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    stop,
    start,
    log: () => output,
  };
}

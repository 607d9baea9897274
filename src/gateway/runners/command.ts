/** @module The `command` runner: spawns a program per turn, message on stdin, reply from stdout, killed on abort. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { allowListedEnv } from "../../index.js";
import type { CommandRunnerConfig } from "../gateway-config.js";
import { type AgentRunner, abortError } from "./runner-types.js";

/** Output past this is cut: a runaway program must not fill the gateway's memory. */
export const MAX_OUTPUT_BYTES = 1_048_576;
/** After SIGTERM, a program that ignores it gets SIGKILL this much later. */
const KILL_GRACE_MS = 2_000;
/** The child's whole environment: the allow-list and `runner.env` from `from`, then the turn's own variables. */
function childEnv(
  passed: readonly string[],
  from: NodeJS.ProcessEnv,
  turn: Record<string, string | undefined>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = allowListedEnv(passed, from);
  for (const [name, value] of Object.entries(turn)) if (value !== undefined) env[name] = value;
  return env;
}

function collect(stream: NodeJS.ReadableStream | null, chunks: Buffer[]): void {
  let size = 0;
  stream?.on("data", (chunk: Buffer) => {
    if (size >= MAX_OUTPUT_BYTES) return;
    chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size));
    size += chunk.length;
  });
}

export function createCommandRunner(
  config: CommandRunnerConfig,
  configDir: string,
  env: NodeJS.ProcessEnv = process.env,
): AgentRunner {
  const cwd = path.resolve(configDir, config.cwd ?? ".");
  return {
    kind: "command",
    run({ turn, signal, history }) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) {
          reject(abortError(signal));
          return;
        }
        // The program gets the conversation so far as a file of its own, removed when the turn ends.
        const historyDir = mkdtempSync(path.join(os.tmpdir(), "hooks-turn-"));
        const sessionFile = path.join(historyDir, "history.jsonl");
        writeFileSync(sessionFile, history.map((message) => `${JSON.stringify(message)}\n`).join(""));
        const cleanUp = () => rmSync(historyDir, { recursive: true, force: true });
        const child = spawn(config.command, config.args, {
          cwd,
          stdio: ["pipe", "pipe", "pipe"],
          env: childEnv(config.env, env, {
            HOOKS_RUN_ID: turn.runId,
            HOOKS_SESSION_KEY: turn.sessionKey,
            HOOKS_SESSION_FILE: sessionFile,
            HOOKS_MODEL: turn.model,
            HOOKS_THINKING: turn.thinking,
          }),
        });
        const stdout: Buffer[] = [];
        const stderr: Buffer[] = [];
        collect(child.stdout, stdout);
        collect(child.stderr, stderr);
        let killTimer: NodeJS.Timeout | undefined;
        const onAbort = () => {
          child.kill("SIGTERM");
          killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
          killTimer.unref();
          reject(abortError(signal));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        const settle = () => {
          signal.removeEventListener("abort", onAbort);
          cleanUp();
        };
        child.on("error", (error) => {
          settle();
          reject(new Error(`cannot run ${config.command}: ${error.message}`));
        });
        child.on("close", (code, killedBy) => {
          settle();
          if (killTimer) clearTimeout(killTimer);
          if (signal.aborted) return;
          if (code === 0) {
            resolve({ reply: Buffer.concat(stdout).toString("utf8").trim() });
            return;
          }
          const detail = Buffer.concat(stderr).toString("utf8").trim().split("\n").at(-1)?.slice(0, 300);
          const how = killedBy ? `was killed by ${killedBy}` : `exited with code ${code}`;
          reject(new Error(`${path.basename(config.command)} ${how}${detail ? `: ${detail}` : ""}`));
        });
        // A program that does not read its stdin must not crash the gateway with EPIPE.
        child.stdin?.on("error", () => undefined);
        child.stdin?.end(turn.message);
      });
    },
  };
}

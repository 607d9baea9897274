/** @module Test harness: runs the real OpenClaw gateway (pinned runtime from scripts/openclaw-runtime.mjs) in a throwaway home, waits until it is ready, stops it by PID. */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  freePort,
  isOpenClawReady,
  isolatedOpenClawEnv,
  killTree,
  openClawRunArgs,
} from "../../scripts/openclaw-launch.mjs";
import type { OpenClawRuntime } from "../../scripts/openclaw-runtime.mjs";
import { STUB_MODEL_ID } from "./stub-model.js";

/** The provider id the stub model is configured under: agents refer to it as `stub/stub-model`. */
export const STUB_PROVIDER_ID = "stub";
/** Start-up takes 10–20 s on 2 cores. */
export const OPENCLAW_READY_TIMEOUT_MS = 90_000;
const DEFAULT_STOP_TIMEOUT_MS = 15_000;
/** A CLI call loads OpenClaw's CLI (3–8 s on 2 cores) and makes one RPC. */
export const OPENCLAW_CLI_TIMEOUT_MS = 60_000;
/**
 * An end-to-end file's set-up: the first run installs OpenClaw and Node 26 (about 850 MB, 40–50 s), then the gateway
 * starts.
 */
export const OPENCLAW_SETUP_TIMEOUT_MS = 240_000 + OPENCLAW_READY_TIMEOUT_MS;
/**
 * Why the end-to-end files skip, or undefined: they run wherever `npm run test:e2e` runs, installing what they need.
 * HOOKS_SKIP_OPENCLAW=1 skips them on a machine without the registry; CI refuses that switch, so there they always run.
 */
export const openClawSkipReason =
  process.env.HOOKS_SKIP_OPENCLAW === "1" && !process.env.CI ? "HOOKS_SKIP_OPENCLAW=1" : undefined;
const READY_PROBE_INTERVAL_MS = 250;
/** `plugins install` unpacks the tarball and installs its dependencies from the registry: about 17 s on 2 cores. */
const INSTALL_TIMEOUT_MS = 180_000;
const TAIL_LINES = 40;
/** OpenClaw's line for a start-up it gave up on (bad config, port taken); what follows is triage, not a retry. */
const STARTUP_FAILED = /Gateway failed to start/;

export interface StartOpenClawGatewayOptions {
  runtime: OpenClawRuntime;
  /**
   * OpenClaw's config (openclaw.json). The harness adds `logging.file` inside the temp dir unless set; the
   * port and the loopback bind are passed on the command line.
   */
  config: Record<string, unknown>;
  /** Extra environment for the gateway, applied last. */
  env?: Record<string, string>;
  /**
   * A plugin tarball (`npm pack`) to install before the start, as users install plugins:
   * `openclaw plugins install <tgz> --force --accept-capabilities`, into the gateway's own fresh home.
   */
  installTarball?: string;
  /** How long to wait for `/readyz`. Default 90 s (about 10–20 s is normal). */
  readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL. Default 15 s (a clean stop takes about 2.5 s). */
  stopTimeoutMs?: number;
}

export interface OpenClawGateway {
  /** e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** The temp dir holding HOME, the state dir, the config and the log file; removed by `stop()`. */
  readonly dir: string;
  readonly pid: number;
  /** Where the config was written (OPENCLAW_CONFIG_PATH): edit it to exercise hot reload. */
  readonly configPath: string;
  /** How long the gateway (its latest start) took from spawn to a ready `/readyz`. */
  readonly readyAfterMs: number;
  /** stdout, stderr and the log file, ANSI colours removed and configured secrets redacted (the file only until stop()). */
  logText(): string;
  /** Whether the unredacted output and log file hold `secret`: how a test proves a token was never logged. */
  containsInLogs(secret: string): boolean;
  /**
   * Runs OpenClaw's CLI against this gateway (`gateway call <method>`, `sessions archive <key>`, …) in the same
   * isolated environment, with `OPENCLAW_GATEWAY_PORT` set to its port, so it takes the gateway's credentials from
   * the config file, never from its command line.
   */
  cli(
    args: readonly string[],
    timeoutMs?: number,
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /**
   * SIGTERM by PID, waits for the exit, and starts the gateway again in the same temp dir (config, state, logs kept):
   * a new process, as after a host's reboot. `url`, `port` and `pid` then name the new one.
   */
  restart(): Promise<void>;
  /** SIGTERM by PID, waits for the exit (SIGKILL after a bound), then removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** The `models.providers` + `agents.defaults.model.primary` block that makes the stub model OpenClaw's only model. */
export function stubModelProviderConfig(baseUrl: string): Record<string, unknown> {
  return {
    models: {
      // Keep OpenClaw's built-in provider catalogue; only the default model below points at the stub.
      mode: "merge",
      providers: {
        [STUB_PROVIDER_ID]: {
          baseUrl,
          // OpenClaw refuses a provider without credentials; the stub ignores it.
          apiKey: "stub-key",
          api: "openai-completions",
          models: [
            {
              id: STUB_MODEL_ID,
              name: "Stub model",
              reasoning: false,
              input: ["text"],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: 128_000,
              maxTokens: 4096,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: `${STUB_PROVIDER_ID}/${STUB_MODEL_ID}` } } },
  };
}

const live = new Set<ChildProcess>();
/** Temp dirs not yet removed by stop(). */
const dirs = new Set<string>();
process.once("exit", () => {
  // Last resort when a test run dies without its afterAll (or a timed-out beforeAll finishes starting one
  // later): never leave a 700 MB gateway or its temp dir behind.
  for (const child of live) if (child.pid !== undefined) killTree(child.pid, "SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

const ANSI = /\u001b\[[0-9;]*m/g;

/** Every string under a key that names a secret (token, apiKey, password, secret), to redact from logs. */
function secretsIn(value: unknown, key = "", found: string[] = []): string[] {
  if (typeof value === "string") {
    if (/(token|apikey|api_key|password|secret)$/i.test(key) && value.length >= 6) found.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) secretsIn(item, key, found);
  } else if (value && typeof value === "object") {
    for (const [childKey, child] of Object.entries(value)) secretsIn(child, childKey, found);
  }
  return found;
}

/** Adds `logging.file` unless the config sets one. */
function withLogFile(config: Record<string, unknown>, logFile: string): Record<string, unknown> {
  const logging = (config["logging"] ?? {}) as Record<string, unknown>;
  if (logging["file"] !== undefined) return config;
  return { ...config, logging: { ...logging, file: logFile } };
}

export async function startOpenClawGateway(options: StartOpenClawGatewayOptions): Promise<OpenClawGateway> {
  const { runtime } = options;
  const readyTimeoutMs = options.readyTimeoutMs ?? OPENCLAW_READY_TIMEOUT_MS;
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;

  const dir = await mkdtemp(path.join(os.tmpdir(), "hooks-openclaw-"));
  dirs.add(dir);
  const home = path.join(dir, "home");
  const stateDir = path.join(dir, "state");
  const tmpDir = path.join(dir, "tmp");
  const configPath = path.join(dir, "openclaw.json");
  const logFile = path.join(dir, "openclaw.log");
  await Promise.all([home, stateDir, tmpDir].map((each) => mkdir(each, { recursive: true })));
  const config = withLogFile(options.config, logFile);
  const effectiveLogFile = String((config["logging"] as Record<string, unknown>)["file"]);
  await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(configPath, 0o600);
  const secrets = [...new Set(secretsIn(config))].sort((a, b) => b.length - a.length);

  let port = await freePort();
  const env: Record<string, string> = {
    ...isolatedOpenClawEnv(runtime, { home, tmpDir, stateDir, configPath }),
    // CLI commands without a --port flag (`message send`, …) then reach this gateway, not the default 18789.
    OPENCLAW_GATEWAY_PORT: String(port),
    ...options.env,
  };

  if (options.installTarball !== undefined) {
    const installed = await runCli(
      runtime,
      env,
      dir,
      ["plugins", "install", options.installTarball, "--force", "--accept-capabilities"],
      INSTALL_TIMEOUT_MS,
    ).catch(async (error: unknown) => {
      await rm(dir, { recursive: true, force: true });
      dirs.delete(dir);
      throw error;
    });
    if (installed.code !== 0) {
      await rm(dir, { recursive: true, force: true });
      dirs.delete(dir);
      throw new Error(
        `openclaw plugins install failed (${installed.code}):\n${installed.stdout}\n${installed.stderr}`,
      );
    }
  }

  // Output of every process this gateway has been (a restart appends to it).
  const stdout: string[] = [];
  const stderr: string[] = [];
  const redact = (text: string): string => {
    let out = text.replace(ANSI, "");
    for (const secret of secrets) out = out.split(secret).join("<redacted>");
    return out;
  };
  const rawLogText = (): string => {
    let file = "";
    try {
      file = readFileSync(effectiveLogFile, "utf8");
    } catch {
      // not written yet
    }
    return `--- stdout\n${stdout.join("")}\n--- stderr\n${stderr.join("")}\n--- ${effectiveLogFile}\n${file}`;
  };
  const logText = (): string => redact(rawLogText());
  const tail = (text: string): string => redact(text).trimEnd().split("\n").slice(-TAIL_LINES).join("\n");

  let child: ChildProcess;
  let exited: Promise<void>;
  let started = Date.now();
  let readyAfterMs = 0;

  /** SIGTERM by PID and the wait for the exit (SIGKILL after the bound); the temp dir stays. */
  const terminate = async (): Promise<void> => {
    if (!hasExited(child) && child.pid !== undefined) {
      try {
        process.kill(child.pid, "SIGTERM");
      } catch {
        // exited between the check and the signal
      }
      let timer: NodeJS.Timeout | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          if (child.pid !== undefined) killTree(child.pid, "SIGKILL");
          resolve();
        }, stopTimeoutMs);
      });
      await Promise.race([exited, killed]);
      clearTimeout(timer);
    }
    await exited;
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await terminate();
      await rm(dir, { recursive: true, force: true });
      dirs.delete(dir);
    })();
    return stopping;
  };

  /** Spawns `openclaw gateway run` on `port` and resolves once `/readyz` answers; stops everything when it fails. */
  const launch = async (): Promise<void> => {
    started = Date.now();
    const url = `http://127.0.0.1:${port}`;
    child = spawn(
      runtime.nodeBin,
      openClawRunArgs(runtime, port),
      // detached: its own process group, so a SIGKILL fallback can reach helpers that did not detach themselves.
      { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    const launched = child;
    live.add(launched);
    let startupFailed = false;
    const watchStartup = (chunk: string): void => {
      if (startupFailed || !STARTUP_FAILED.test(chunk)) return;
      startupFailed = true;
      // After a failed start OpenClaw runs "automatic triage": ~17 s of diagnostics, and it may launch a coding
      // agent CLI it finds on PATH. A termination signal cancels it; the exit then rejects the start below.
      try {
        process.kill(launched.pid!, "SIGTERM");
      } catch {
        // already gone
      }
    };
    launched.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout.push(chunk);
      watchStartup(chunk);
    });
    launched.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr.push(chunk);
      watchStartup(chunk);
    });
    exited = new Promise<void>((resolve) => {
      launched.once("exit", () => {
        live.delete(launched);
        resolve();
      });
      launched.once("error", () => {
        live.delete(launched);
        resolve();
      });
    });
    const launchedExit = exited;

    // Ready when /readyz says so (OpenClaw pushes no readiness signal, so it is probed); fails at once if the
    // gateway exits first (bad config, port taken, wrong Node).
    const ready = await new Promise<boolean>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(probeTimer);
        outcome();
      };
      const deadline = setTimeout(() => finish(() => resolve(false)), readyTimeoutMs);
      let probeTimer: NodeJS.Timeout | undefined;
      const probe = async () => {
        if (settled) return;
        if (await isOpenClawReady(url)) finish(() => resolve(true));
        else if (!settled) probeTimer = setTimeout(probe, READY_PROBE_INTERVAL_MS);
      };
      launchedExit.then(() =>
        finish(() =>
          reject(
            new Error(
              `OpenClaw gateway exited before it was ready (code ${launched.exitCode}, signal ${launched.signalCode}):\n` +
                tail(stderr.join("") || stdout.join("")),
            ),
          ),
        ),
      );
      launched.once("error", (error) => finish(() => reject(error)));
      void probe();
    }).catch(async (error: unknown) => {
      await stop();
      throw error;
    });
    if (!ready) {
      const text = logText();
      await stop();
      throw new Error(`OpenClaw gateway not ready within ${readyTimeoutMs} ms:\n${tail(text)}`);
    }
    readyAfterMs = Date.now() - started;
  };

  await launch();

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    dir,
    get pid() {
      return child.pid!;
    },
    configPath,
    get readyAfterMs() {
      return readyAfterMs;
    },
    logText,
    containsInLogs: (secret: string) => rawLogText().replace(ANSI, "").includes(secret),
    // The CLI finds this gateway on its current port (it moves with a restart) without a `--port` of its own.
    cli: (args, timeoutMs = OPENCLAW_CLI_TIMEOUT_MS) =>
      runCli(runtime, { ...env, OPENCLAW_GATEWAY_PORT: String(port) }, dir, args, timeoutMs),
    async restart() {
      if (stopping !== undefined) throw new Error("restart() after stop()");
      await terminate();
      // Its port may have been taken meanwhile: the restarted gateway listens on a free one (`url` follows it).
      port = await freePort();
      await launch();
    },
    stop,
  };
}

/** One CLI run, its output collected; killed (tree and all) when it outlives `timeoutMs`. */
async function runCli(
  runtime: OpenClawRuntime,
  env: Record<string, string>,
  cwd: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(runtime.nodeBin, [runtime.openclawEntry, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => {
    if (child.pid !== undefined) killTree(child.pid, "SIGKILL");
  }, timeoutMs);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exitCode) => resolve(exitCode));
    });
    return { code, stdout: stdout.replace(ANSI, ""), stderr: stderr.replace(ANSI, "") };
  } finally {
    clearTimeout(timer);
    live.delete(child);
  }
}

/** A JSON POST to the gateway with a bearer token (the plugin's hook token, or OpenClaw's gateway token). */
export function postJson(
  gateway: OpenClawGateway,
  path: string,
  body: unknown,
  token: string,
): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The stub model's first prompt `where` accepts; on a timeout the error carries the gateway's log (secrets redacted). */
export async function promptOrLog(
  stub: { waitForPrompt(where: (text: string) => boolean, timeoutMs: number): Promise<string> },
  gateway: OpenClawGateway,
  where: (text: string) => boolean,
  timeoutMs: number,
): Promise<string> {
  try {
    return await stub.waitForPrompt(where, timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- gateway log\n${gateway.logText().slice(-8_000)}`);
  }
}

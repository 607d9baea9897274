/**
 * @module One OpenClaw gateway for the bench: the runtime the end-to-end test installs (scripts/openclaw-runtime.mjs:
 * openclaw 2026.9.6 and Node 26 in a cache directory, installed on first use), started as the test harness does
 * (test/helpers/openclaw-gateway.ts: a throwaway HOME, OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH,
 * OPENCLAW_SKIP_GMAIL_WATCHER=1, `logging.file`, `gateway run --allow-unconfigured --bind loopback --port <p>`),
 * under `taskset -c <server core>`, so the gateway and everything it forks (a spawn broker, SQLite worker processes)
 * run on the server's core. Ready when `/readyz` answers `{ "ready": true }` (13-25 s on 2 cores). Stopped by its
 * PID with SIGTERM (SIGKILL to the process tree after 15 s); its temp dir is removed. With `floor`, the bench's floor
 * plugin (bench/openclaw-floor/) is loaded beside whatever the config loads.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  descendants,
  freePort,
  isOpenClawReady,
  isolatedOpenClawEnv,
  killTree,
  openClawRunArgs,
} from "../../scripts/openclaw-launch.mjs";
import { ensureOpenClawRuntime, OPENCLAW_VERSION } from "../../scripts/openclaw-runtime.mjs";
import { PIN } from "./pinning.mjs";
import { makeTempDir, removeTempDir } from "./processes.mjs";

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;
const PROBE_INTERVAL_MS = 250;
const OUTPUT_TAIL = 8_000;
/** OpenClaw's line for a start-up it gave up on (bad config, port taken). */
const STARTUP_FAILED = /Gateway failed to start/;

export { OPENCLAW_VERSION };

/** The floor plugin: the least a plugin route that queues a system event can do, the bar for this plugin's /wake. */
export const FLOOR_PLUGIN_ROOT = fileURLToPath(new URL("../openclaw-floor/", import.meta.url));
export const FLOOR_PLUGIN_ID = "bench-floor";

/** `config` with the floor plugin loaded too (`plugins.load.paths`, `plugins.entries`), answering on `<path>/wake`. */
function withFloor(config, { token, path: floorPath }) {
  const plugins = config.plugins ?? {};
  return {
    ...config,
    plugins: {
      ...plugins,
      load: { ...plugins.load, paths: [...(plugins.load?.paths ?? []), FLOOR_PLUGIN_ROOT] },
      entries: {
        ...plugins.entries,
        [FLOOR_PLUGIN_ID]: { enabled: true, config: { token, path: floorPath } },
      },
    },
  };
}

const live = new Set();
// Whatever ends the bench, no 700 MB gateway outlives it (processes.mjs removes the temp dirs it made).
process.on("exit", () => {
  for (const pid of live) killTree(pid, "SIGKILL");
});

/**
 * Starts one OpenClaw gateway with `config` (openclaw.json; `logging.file` is added inside its temp dir) and
 * resolves once it is ready: `{ label, pid, url, readyMs, dir, children(), output(), stop() }`, a server handle
 * `measure` takes (its CPU figure is the gateway process's, every thread; `children()` lists the processes it
 * forked, whose CPU `measure`'s `alsoPids` can read). `floor: { token, path }` loads the floor plugin too; `env` is
 * added to the gateway's environment (e.g. NODE_OPTIONS with --cpu-prof, which the processes it forks inherit);
 * `readyTimeoutMs` (120 s) bounds the start, `stopTimeoutMs` (15 s) the wait after SIGTERM before SIGKILL.
 */
export async function startOpenClaw({
  label = `OpenClaw ${OPENCLAW_VERSION}`,
  config: given,
  floor,
  env: extraEnv = {},
  readyTimeoutMs = READY_TIMEOUT_MS,
  stopTimeoutMs = STOP_TIMEOUT_MS,
  log = () => {},
}) {
  const config = floor ? withFloor(given, floor) : given;
  const runtime = await ensureOpenClawRuntime({ log });
  const dir = makeTempDir("openclaw");
  const home = path.join(dir, "home");
  const stateDir = path.join(dir, "state");
  const tmpDir = path.join(dir, "tmp");
  const configPath = path.join(dir, "openclaw.json");
  await Promise.all([home, stateDir, tmpDir].map((each) => mkdir(each, { recursive: true })));
  const full = { ...config, logging: { ...config.logging, file: path.join(dir, "openclaw.log") } };
  await writeFile(configPath, `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 });

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { ...isolatedOpenClawEnv(runtime, { home, tmpDir, stateDir, configPath }), ...extraEnv };
  const args = openClawRunArgs(runtime, port);
  // taskset execs node: the child's PID is the gateway's.
  const command = PIN.enabled ? "taskset" : runtime.nodeBin;
  const commandArgs = PIN.enabled ? ["-c", String(PIN.serverCpu), runtime.nodeBin, ...args] : args;
  const started = performance.now();
  const child = spawn(command, commandArgs, {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child.pid);
  let output = "";
  let startupFailed = false;
  const keep = (chunk) => {
    const text = chunk.toString("utf8");
    output += text;
    if (output.length > 2 * OUTPUT_TAIL) output = output.slice(-OUTPUT_TAIL);
    // After a failed start OpenClaw runs minutes of "automatic triage" (and may launch a coding agent it finds on
    // PATH): a termination signal cancels it, and the exit fails the start below.
    if (!startupFailed && STARTUP_FAILED.test(text)) {
      startupFailed = true;
      try {
        process.kill(child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child.pid);
      resolve({ code, signal });
    });
    child.once("error", (error) => {
      live.delete(child.pid);
      resolve({ code: null, signal: null, error });
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  let stopping;
  const handle = {
    label,
    pid: child.pid,
    url,
    dir,
    readyMs: 0,
    /** The processes the gateway forked (spawn broker, SQLite workers), now. */
    children: () => descendants(child.pid),
    output: () => output.slice(-OUTPUT_TAIL),
    stop() {
      stopping ??= (async () => {
        const helpers = descendants(child.pid);
        if (!gone()) {
          try {
            process.kill(child.pid, "SIGTERM");
          } catch {
            // Exited meanwhile.
          }
          const timer = setTimeout(() => killTree(child.pid, "SIGKILL"), stopTimeoutMs);
          await exited;
          clearTimeout(timer);
        }
        // Its helpers normally end with it; any left over (by the PIDs it had forked) go now.
        for (const pid of helpers) {
          try {
            if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("openclaw"))
              process.kill(pid, "SIGKILL");
          } catch {
            // Gone.
          }
        }
        removeTempDir(dir);
      })();
      return stopping;
    },
  };

  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (gone()) {
      const { code, signal } = await exited;
      await handle.stop();
      throw new Error(
        `${label} exited before it was ready (code ${code}, signal ${signal}):\n${output.slice(-3000)}`,
      );
    }
    if (await isOpenClawReady(url)) break;
    if (Date.now() > deadline) {
      await handle.stop();
      throw new Error(`${label} not ready within ${readyTimeoutMs} ms:\n${output.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
  }
  handle.readyMs = performance.now() - started;
  return handle;
}

/** @module How an isolated OpenClaw gateway is launched from the runtime cache and stopped: its environment, command line, port, readiness and process tree. Shared by the end-to-end tests and the bench. */
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

/** The caller's environment without what would leak into OpenClaw: its own settings, Node's flags, npm's and vitest's. */
function inheritedEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^OPENCLAW_/.test(key) || /^(NODE_OPTIONS|NODE_PATH|NODE_V8_COVERAGE)$/.test(key)) continue;
    if (/^(npm_|VITEST)/i.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/** An environment whose home, temp, state and config all live in the caller's directories, with the pinned Node first on PATH. */
export function isolatedOpenClawEnv(runtime, { home, tmpDir, stateDir, configPath }) {
  return {
    ...inheritedEnv(),
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    TMPDIR: tmpDir,
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: configPath,
    OPENCLAW_SKIP_GMAIL_WATCHER: "1",
    NO_COLOR: "1",
    PATH: [path.dirname(runtime.nodeBin), runtime.binDir, process.env.PATH ?? ""].join(path.delimiter),
  };
}

/**
 * The arguments after the Node binary. `--bind loopback`: in a container OpenClaw defaults to bind=auto (0.0.0.0)
 * and then refuses to start without gateway auth. `--allow-unconfigured`: no `gateway.mode=local` needed in a
 * throwaway config.
 */
export function openClawRunArgs(runtime, port) {
  return [
    runtime.openclawEntry,
    "gateway",
    "run",
    "--allow-unconfigured",
    "--bind",
    "loopback",
    "--port",
    String(port),
  ];
}

/** True once `/readyz` answers its JSON contract (the Control UI answers unknown paths with a catch-all 200). */
export async function isOpenClawReady(url) {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    const text = await response.text();
    return response.status === 200 && JSON.parse(text).ready === true;
  } catch {
    return false;
  }
}

/** A free loopback port, as the OS hands it out. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The PIDs below `pid`, from /proc (Linux); elsewhere none, and the group kill alone has to do. */
export function descendants(pid) {
  let entries;
  try {
    entries = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  const children = new Map();
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the command name, which is in parentheses and may itself contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Signals the gateway, every process below it by PID (SIGKILL skips OpenClaw's own cleanup, and its spawn broker
 * leads a process group of its own), and its process group (it is started detached).
 */
export function killTree(pid, signal) {
  for (const each of [...descendants(pid), pid]) {
    try {
      process.kill(each, signal);
    } catch {
      // Already gone.
    }
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // No such group any more.
  }
}

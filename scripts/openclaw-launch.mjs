/** @module How an isolated OpenClaw gateway is launched from the runtime cache: its environment, its command line, its readiness. Shared by the end-to-end tests and the bench. */
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

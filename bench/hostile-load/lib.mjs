/** @module Hostile-load attacks: start a real `hooks serve` (a build given by its root) on loopback, POST from a chosen address, read /proc. */
import { writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { readStatusKb } from "../lib/proc.mjs";
import { makeTempDir, removeTempDir, spawnGateway } from "../lib/processes.mjs";

export const TOKEN = "attack-test-token-0123456789abcdef";

/**
 * `hooks serve` of the build at `root` on `config`, in a temp dir of its own (its state there) that `stop` removes,
 * as does the bench's exit. `nodeArgs` go to node before the CLI (`--cpu-prof`).
 */
export async function startServer(root, config, { nodeArgs = [] } = {}) {
  const dir = makeTempDir("hostile-load");
  const configFile = path.join(dir, "gateway.json5");
  writeFileSync(configFile, JSON.stringify(config));
  const server = await spawnGateway({
    label: "hooks serve",
    configFile,
    stateDir: path.join(dir, "state"),
    env: { HOOKS_LOG_LEVEL: "warn" },
    nodeArgs,
    bin: path.join(root, "bin", "hooks.js"),
  });
  return {
    pid: server.pid,
    url: server.url,
    dir,
    /** SIGTERM by default, which lets --cpu-prof write its profile; SIGKILL if it has not exited in 15 s. */
    async stop(signal = "SIGTERM") {
      await server.stop(signal);
      removeTempDir(dir);
    },
  };
}

/** The process's resident memory now and at its peak, in MiB (0 once it is gone). */
export function status(pid) {
  return {
    rssMb: (readStatusKb(pid, "VmRSS") ?? 0) / 1024,
    hwmMb: (readStatusKb(pid, "VmHWM") ?? 0) / 1024,
  };
}

/** A legitimate /wake from 127.0.0.2, an address no attack comes from: the request each item times. */
export function wakeFromOther(url, text = "hi") {
  const body = JSON.stringify({ text, mode: "next-heartbeat" });
  return post(`${url}/hooks/wake`, body, { authorization: `Bearer ${TOKEN}` }, "127.0.0.2");
}
export function post(url, body, headers = {}, localAddress) {
  return new Promise((resolve) => {
    const u = new URL(url);
    const started = performance.now();
    const req = http.request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        agent: false,
        localAddress,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            body: text,
            ms: performance.now() - started,
            headers: res.headers,
          }),
        );
      },
    );
    req.on("error", (e) => resolve({ status: 0, error: e.code, ms: performance.now() - started }));
    req.setTimeout(15000, () => req.destroy(new Error("timeout")));
    req.end(body);
  });
}

/** @module Hostile-load attacks: start a real `hooks serve` (a build given by its root) on loopback, POST from a chosen address, read /proc. */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
export const TOKEN = "attack-test-token-0123456789abcdef";
export async function startServer(root, config, extraArgs = [], env = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conn-attack-"));
  const file = path.join(dir, "gateway.json5");
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(
    process.execPath,
    [
      ...(env.NODE_ARGS ?? []),
      path.join(root, "bin/hooks.js"),
      "serve",
      "--config",
      file,
      "--port",
      "0",
      "--state-dir",
      path.join(dir, "state"),
      ...extraArgs,
    ],
    { cwd: dir, env: { ...process.env, HOOKS_LOG_LEVEL: "warn", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stderr.on("data", (c) => {
    out += c;
  });
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once("exit", () => reject(new Error("exited: " + out)));
  });
  return {
    child,
    url,
    dir,
    out: () => out,
    stop: async () => {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
export function status(pid) {
  const t = readFileSync(`/proc/${pid}/status`, "utf8");
  const get = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(t)[1]) / 1024;
  return { rssMb: get("VmRSS"), hwmMb: get("VmHWM") };
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

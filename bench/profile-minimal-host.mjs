/**
 * @module Profiles the plugin on the minimal host (bench/minimal-host.mjs, `node --cpu-prof`, pinned like the bench)
 * under the bench's /wake load and prints where the CPU goes: self time, areas and inclusive time, in ms of the
 * measured window, beside the server's /proc CPU per request.
 *
 *   npm run build && node bench/profile-minimal-host.mjs [top]
 *
 * BENCH_PROFILE_SECONDS (default 5) sets the measured load, after 2 s of warm-up; BENCH_PROFILE_KEEP=<dir> keeps
 * the .cpuprofile file.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { WAKE_BODY } from "./lib/configs.mjs";
import { analyseProfile } from "./lib/cpuprofile.mjs";
import { measure } from "./lib/load.mjs";
import { nodeCommand, PIN, pinThisProcess } from "./lib/pinning.mjs";
import { ROOT } from "./lib/processes.mjs";

const top = Number(process.argv[2] ?? 30);
const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 5);
const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-profile-minimal-"));
const profiles = process.env.BENCH_PROFILE_KEEP ?? path.join(dir, "profiles");
const token = randomUUID();
const args = ["--cpu-prof", `--cpu-prof-dir=${profiles}`, path.join(ROOT, "bench", "minimal-host.mjs")];
pinThisProcess();
const { command, args: commandArgs } = nodeCommand(PIN.serverCpu, args);
const child = spawn(command, commandArgs, {
  env: { ...process.env, BENCH_MINIMAL_TOKEN: token, BENCH_MINIMAL_STATE_DIR: path.join(dir, "state") },
  stdio: ["ignore", "pipe", "inherit"],
});
try {
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.once("exit", (code) => reject(new Error(`the minimal host exited (${code}) before it listened`)));
  });
  const server = { url, pid: child.pid };
  const request = {
    path: "/hooks/wake",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: WAKE_BODY,
  };
  await measure(server, request, 2);
  const run = await measure(server, request, seconds);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  const file = path.join(
    profiles,
    readdirSync(profiles).find((name) => name.endsWith(".cpuprofile")),
  );
  const profile = analyseProfile(file, { lastMs: seconds * 1000 });
  const perRequest = (ms) => ((ms * 1000) / run.requests).toFixed(1);
  process.stdout.write(
    `${Math.round(run.rps)} req/s, ${run.serverCpuUsPerRequest.toFixed(1)} µs CPU per request (/proc); profile busy ${Math.round(profile.busyMs)} ms, ${perRequest(profile.busyMs)} µs per request\n`,
  );
  for (const ranking of ["self", "areas", "inclusive"]) {
    process.stdout.write(`\n${ranking} (µs per request, %):\n`);
    for (const row of profile[ranking].slice(0, top)) {
      process.stdout.write(
        `${perRequest(row.ms).padStart(8)} ${String(row.percent).padStart(5)}  ${row.name}\n`,
      );
    }
  }
} finally {
  if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}

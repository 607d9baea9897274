/**
 * @module Core pinning: the server under test on one core, the load generator and the bench itself on another,
 * so a server's figures do not depend on how it shares a core with its client. BENCH_PIN=0 turns it off;
 * BENCH_SERVER_CPU (0) and BENCH_CLIENT_CPU (1) choose the cores.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

function cpuFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a core number, got "${raw}"`);
  return Number(raw);
}

/** The cores this process may run on ("0-1,4" in /proc/self/status). */
function allowedCpus() {
  const status = readFileSync("/proc/self/status", "utf8");
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? "";
  const cpus = new Set();
  for (const part of list.split(",").filter(Boolean)) {
    const [from, to = from] = part.split("-").map(Number);
    for (let cpu = from; cpu <= to; cpu++) cpus.add(cpu);
  }
  return cpus;
}

function readPinning() {
  if (process.env.BENCH_PIN === "0") return { enabled: false };
  const serverCpu = cpuFromEnv("BENCH_SERVER_CPU", 0);
  const clientCpu = cpuFromEnv("BENCH_CLIENT_CPU", 1);
  const unpinned = "set BENCH_PIN=0 to run unpinned";
  if (serverCpu === clientCpu) throw new Error(`the server and the client need two cores; ${unpinned}`);
  const allowed = allowedCpus();
  for (const cpu of [serverCpu, clientCpu]) {
    if (!allowed.has(cpu)) {
      throw new Error(`core ${cpu} is not available here (allowed: ${[...allowed].join(",")}); ${unpinned}`);
    }
  }
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" });
  } catch {
    throw new Error(`taskset (util-linux) is needed to pin processes; ${unpinned}`);
  }
  return { enabled: true, serverCpu, clientCpu };
}

export const PIN = readPinning();

export function describePinning() {
  return PIN.enabled
    ? `pinned: server on core ${PIN.serverCpu}, load generator and bench on core ${PIN.clientCpu}`
    : "unpinned (BENCH_PIN=0): server, load generator and bench share every core";
}

/** The command that runs `node <args>` on `cpu` (taskset execs node: the child's pid is node's), or unpinned. */
export function nodeCommand(cpu, args) {
  if (!PIN.enabled) return { command: process.execPath, args };
  return { command: "taskset", args: ["-c", String(cpu), process.execPath, ...args] };
}

/**
 * Moves every thread of this process onto the client's core. The bench drains the gateway's log pipe and reads
 * /proc while the server runs; on the server's core that work would be charged to the server's throughput.
 */
export function pinThisProcess() {
  if (!PIN.enabled) return;
  execFileSync("taskset", ["-a", "-cp", String(PIN.clientCpu), String(process.pid)], { stdio: "ignore" });
}

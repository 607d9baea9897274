/**
 * @module A redis-server of the bench's own, for the Redis store's scenario and profile: on a free loopback port,
 * nothing persisted (`--save "" --appendonly no`), pinned to the load generator's core (Redis is another service,
 * not the gateway's CPU), its CPU time read from /proc/<pid>/stat, stopped by its PID. A few commands (INFO,
 * DBSIZE, CONFIG RESETSTAT) over a plain RESP socket, so the bench needs no Redis client of its own.
 */
import { execFileSync, spawn } from "node:child_process";
import { createConnection } from "node:net";
import { freePort } from "../../scripts/openclaw-launch.mjs";
import { PIN } from "./pinning.mjs";
import { makeTempDir, readCpuMs, removeTempDir } from "./processes.mjs";

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const COMMAND_TIMEOUT_MS = 5_000;
/** `BENCH_REDIS_SERVER` names another redis-server binary; by default the one on the PATH. */
const BINARY = process.env.BENCH_REDIS_SERVER || "redis-server";

const running = new Set();
// Whatever ends the bench (an error, Ctrl-C: processes.mjs exits on the signals), no redis-server outlives it.
process.on("exit", () => {
  for (const pid of running) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

function checkInstalled() {
  try {
    return execFileSync(BINARY, ["--version"], { encoding: "utf8" }).trim();
  } catch (error) {
    throw new Error(
      `the Redis store's bench needs a redis-server (${BINARY}: ${error.code === "ENOENT" ? "not found" : error.message}); ` +
        "install it (Debian: apt-get install redis-server) or point BENCH_REDIS_SERVER at one",
    );
  }
}

/** RESP: an array of bulk strings. */
function encode(args) {
  let out = `*${args.length}\r\n`;
  for (const arg of args) out += `$${Buffer.byteLength(String(arg))}\r\n${arg}\r\n`;
  return out;
}

/** The first complete RESP reply in `buffer` (simple string, error, integer or bulk string), or undefined. */
function decode(buffer) {
  const end = buffer.indexOf("\r\n");
  if (end === -1) return undefined;
  const type = String.fromCharCode(buffer[0]);
  const line = buffer.subarray(1, end).toString("utf8");
  if (type === "+") return { value: line };
  if (type === "-") return { error: line };
  if (type === ":") return { value: Number(line) };
  if (type === "$") {
    const length = Number(line);
    if (length === -1) return { value: null };
    if (buffer.length < end + 2 + length + 2) return undefined;
    return { value: buffer.subarray(end + 2, end + 2 + length).toString("utf8") };
  }
  throw new Error(`redis: unexpected reply type ${type}`);
}

/** One command on a connection of its own (the bench sends a handful, never under load). */
function command(port, args) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis: ${args[0]} not answered within ${COMMAND_TIMEOUT_MS} ms`));
    }, COMMAND_TIMEOUT_MS);
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      const reply = decode(buffer);
      if (!reply) return;
      clearTimeout(timer);
      socket.end();
      if (reply.error !== undefined) reject(new Error(`redis: ${args[0]}: ${reply.error}`));
      else resolve(reply.value);
    });
    socket.write(encode(args));
  });
}

/** `INFO <section>` as `{ field: value }` (the `# Section` lines dropped). */
function parseInfo(text) {
  const fields = {};
  for (const line of text.split("\r\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf(":");
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

/**
 * `INFO commandstats` as `{ del: { calls, usec }, evalsha: ... }`: what the server was sent, by command, and the
 * microseconds it spent executing each (its own accounting: command execution only, no I/O).
 */
export function parseCommandStats(fields) {
  const stats = {};
  for (const [name, value] of Object.entries(fields)) {
    if (!name.startsWith("cmdstat_")) continue;
    const entry = {};
    for (const pair of value.split(",")) {
      const [key, number] = pair.split("=");
      entry[key] = Number(number);
    }
    stats[name.slice("cmdstat_".length)] = { calls: entry.calls ?? 0, usec: entry.usec ?? 0 };
  }
  return stats;
}

/**
 * Starts a redis-server on a free loopback port, pinned to the load generator's core (unpinned with BENCH_PIN=0),
 * and resolves once it logs "Ready to accept connections". Throws a clear error when no redis-server is installed.
 */
export async function startRedisServer({ label = "redis-server" } = {}) {
  const version = checkInstalled();
  const port = await freePort();
  const dir = makeTempDir("redis");
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--daemonize",
    "no",
    "--loglevel",
    "notice",
  ];
  const [command_, commandArgs] = PIN.enabled
    ? ["taskset", ["-c", String(PIN.clientCpu), BINARY, ...args]]
    : [BINARY, args];
  // taskset execs redis-server: the child's PID is the server's.
  const child = spawn(command_, commandArgs, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child.pid);
  let output = "";
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      running.delete(child.pid);
      resolve({ code, signal });
    });
  });
  await new Promise((resolve, reject) => {
    let ready = false;
    const fail = (message) => {
      clearTimeout(timer);
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      reject(new Error(`${label}: ${message}\n${output.slice(-3000)}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const onData = (chunk) => {
      if (output.length < 64_000) output += chunk.toString("utf8");
      if (!ready && output.includes("Ready to accept connections")) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (error) => fail(`spawn failed: ${error.message}`));
    void exited.then(({ code, signal }) => {
      if (!ready) fail(`exited before ready (code ${code}, signal ${signal})`);
    });
  });

  const pid = child.pid;
  return {
    label,
    version,
    pid,
    port,
    url: `redis://127.0.0.1:${port}`,
    /** CPU time (user + system, every thread) the server has used so far, in milliseconds. */
    cpuMs: () => readCpuMs(pid),
    command: (...commandArgs_) => command(port, commandArgs_),
    info: async (section) => parseInfo(await command(port, ["INFO", section])),
    async commandStats() {
      return parseCommandStats(parseInfo(await command(port, ["INFO", "commandstats"])));
    },
    dbsize: () => command(port, ["DBSIZE"]),
    /** SIGTERM to its PID (no save: persistence is off), SIGKILL if it has not exited in time; removes its dir. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(pid, "SIGTERM");
        const timer = setTimeout(() => {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Gone meanwhile.
          }
        }, STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      removeTempDir(dir);
    },
  };
}

/** @module What every scenario shares: settings from the environment, the token, the configs, the baseline, cleanup. */
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { newToken, writeBenchConfig } from "./configs.mjs";
import { PIN, pinThisProcess } from "./pinning.mjs";
import { logLines, makeTempDir, removeTempDir, spawnBaseline, spawnGateway } from "./processes.mjs";
import { formatTable } from "./report.mjs";

export function numberFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export function readSettings() {
  return {
    seconds: numberFromEnv("BENCH_SECONDS", 4),
    pairs: Math.round(numberFromEnv("BENCH_PAIRS", 3)),
    warmupSeconds: numberFromEnv("BENCH_WARMUP_SECONDS", 1.5),
    connections: 50,
    /** BENCH_DIAGNOSTICS=0: rows without a target are skipped (whole scenarios, and variants within one). */
    diagnostics: process.env.BENCH_DIAGNOSTICS !== "0",
    pin: PIN,
  };
}

export async function createContext({ log = (line) => process.stdout.write(`${line}\n`) } = {}) {
  const settings = readSettings();
  pinThisProcess();
  const dir = makeTempDir("run");
  const token = newToken();
  const configFile = writeBenchConfig(dir, token);
  let baseline;
  let durableBaseline;
  const gateways = new Set();
  let stateDirs = 0;

  return {
    settings,
    token,
    dir,
    configFile,
    log,
    /** The bare node:http baseline (bench/baseline-server.mjs), one process for the whole run (it keeps no state). */
    async baseline() {
      baseline ??= await spawnBaseline({ token });
      return baseline;
    },
    /**
     * The durable baseline (the bare one plus a JSON line per request and one fdatasync per event-loop turn
     * before the answers), one process for the whole run, its file in the run's temp dir.
     */
    async durableBaseline() {
      durableBaseline ??= await spawnBaseline({
        token,
        journalFile: path.join(dir, "durable-baseline.jsonl"),
      });
      return durableBaseline;
    },
    /** A gateway through the real CLI, with its own fresh state directory under the run's temp dir. */
    async startGateway({ label, configFile: file = configFile, env = {}, nodeArgs = [], bin } = {}) {
      const stateDir = path.join(dir, `state-${++stateDirs}`);
      const gateway = await spawnGateway({
        label,
        configFile: file,
        stateDir,
        env,
        nodeArgs,
        ...(bin ? { bin } : {}),
      });
      gateway.stateDir = stateDir;
      gateways.add(gateway);
      const stop = gateway.stop.bind(gateway);
      gateway.stop = async (signal) => {
        const result = await stop(signal);
        gateways.delete(gateway);
        return result;
      };
      return gateway;
    },
    async close() {
      await Promise.all([...gateways].map((gateway) => gateway.stop()));
      if (baseline) await baseline.stop();
      if (durableBaseline) {
        await durableBaseline.stop();
        const closed = logLines(durableBaseline.stopOutput, "baseline closed").at(-1);
        if (closed) {
          log(
            `durable baseline: ${closed.lines} lines in ${closed.fsyncs} fdatasyncs ` +
              `(${(closed.lines / Math.max(1, closed.fsyncs)).toFixed(1)} per sync) over the run`,
          );
        }
      }
      removeTempDir(dir);
    },
  };
}

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    totalMemoryBytes: os.totalmem(),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

/** True when `moduleUrl` is the script node was started with (a scenario run on its own). */
export function isMain(moduleUrl) {
  return process.argv[1] !== undefined && pathToFileURL(path.resolve(process.argv[1])).href === moduleUrl;
}

/** Runs one scenario with its own context and prints its rows; results.json is the runner's alone. */
export async function runStandalone(scenario) {
  const context = await createContext();
  try {
    context.log(
      `${scenario.title} (BENCH_SECONDS=${context.settings.seconds}, BENCH_PAIRS=${context.settings.pairs})`,
    );
    const rows = await scenario.run(context);
    context.log(`\n${formatTable(rows)}`);
    if (rows.some((row) => row.pass === false)) process.exitCode = 1;
  } finally {
    await context.close();
  }
}

/** @module `hooks serve`: runs the reference gateway until SIGINT/SIGTERM, then stops it gracefully; SIGHUP reloads its config. */
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { field } from "../config/plain-object.js";
import { describeEndpoints, formatRows, wakeCurlLine } from "../gateway/endpoints.js";
import {
  DEMO_TOKEN_ENV,
  type LoadedGatewayConfig,
  loadGatewayConfig,
} from "../gateway/load-gateway-config.js";
import { resolveLogFile } from "../gateway/log-file.js";
import { createGatewayLogger, isLogLevel } from "../gateway/logger.js";
import { DEFAULT_CAPTURE_DIR } from "../gateway/request-capture.js";
import { DEFAULT_STATE_DIR, type GatewayHandle, startGateway } from "../gateway/start-gateway.js";
import { checkHooksConfig, configuredAgents, formatIssue, isConfigError } from "../index.js";
import type { CliIo } from "./cli-io.js";
import { foldConfigProblems } from "./config-problems.js";

interface ServeOptions {
  config?: string;
  host?: string;
  port?: number;
  stateDir: string;
  record?: string;
  capture?: string;
  logFile?: string;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new InvalidArgumentError("must be a port number from 0 to 65535");
  return port;
}

const ORIGIN_NOTE: Record<LoadedGatewayConfig["origin"], string> = {
  flag: "",
  cwd: " (./gateway.json5)",
  demo: " (bundled demo; pass --config or create ./gateway.json5 for your own)",
};

/** What a person needs once the gateway is up: where it listens, what to POST to, and a curl line that works. */
export function readyBanner(
  loaded: LoadedGatewayConfig,
  handle: GatewayHandle,
  recordFile: string | undefined,
  logFile?: string,
  inspector?: string,
): string {
  const lines = [
    `hooks gateway listening on ${handle.url}`,
    `  config  ${loaded.file}${ORIGIN_NOTE[loaded.origin]}`,
    `  state   ${handle.stateDir}`,
    `  runner  ${handle.sections.runner.kind}`,
  ];
  if (recordFile) lines.push(`  record  ${recordFile}`);
  if (logFile) lines.push(`  log     ${logFile}`);
  if (handle.metricsUrl) lines.push(`  metrics ${handle.metricsUrl}`);

  if (handle.hooksPath === undefined || handle.hooks === undefined) {
    lines.push("hooks are disabled: set hooks.enabled to true in the config to expose the intake");
    return `${lines.join("\n")}\n`;
  }
  lines.push(`  store   ${handle.hooks.store}`);
  lines.push('endpoints (POST, with the token in "Authorization: Bearer <token>"):');
  lines.push(
    ...formatRows(
      describeEndpoints(handle.url, handle.hooksPath, handle.hooks.mappings, handle.hooks.rateLimits),
    ),
  );
  const token = (loaded.raw.hooks as { token?: unknown } | undefined)?.token ?? "";
  // A token read from a variable (`{ env: "NAME" }`) is shown as that variable, as `${HOOKS_TOKEN}` is.
  const tokenVariable = field(token, "env");
  if (loaded.generatedToken !== undefined) {
    lines.push(`token generated for this run: ${loaded.generatedToken}`);
    lines.push(`  (export ${DEMO_TOKEN_ENV} to keep one token across runs)`);
  }
  if (loaded.standIns.length > 0) {
    lines.push(
      `not set, so random for this run: ${loaded.standIns.join(", ")} (set them to connect those senders)`,
    );
  }
  // Only a token generated for this run (printed above anyway) appears in the line; a token the user set is
  // referred to, never printed: stdout often ends up in a service log.
  const curlToken =
    loaded.generatedToken !== undefined
      ? { literal: loaded.generatedToken }
      : typeof tokenVariable === "string"
        ? { shellVar: tokenVariable }
        : token !== "" && token === process.env[DEMO_TOKEN_ENV]
          ? { shellVar: DEMO_TOKEN_ENV }
          : { literal: "<hooks.token>" };
  lines.push("try it:", `  ${wakeCurlLine(handle.url, handle.hooksPath, curlToken)}`);
  if (inspector) lines.push(inspector);
  return `${lines.join("\n")}\n`;
}

/** Where `hooks serve` leaves the inspector's login link when nobody reads its stdout (mode 0600, removed at stop). */
export const INSPECTOR_LINK_FILE = "inspector-link";

/**
 * The banner's last line, where it is easy to find. The link logs in: a key made for this start travels in its
 * fragment, which a browser never sends. It is printed only to a terminal; a service's stdout ends up in its log,
 * so there the link goes to a file only its user can read. A configured key is referred to, never printed.
 */
export function inspectorLine(handle: GatewayHandle, terminal: boolean): string | undefined {
  if (!handle.inspectorUrl) return undefined;
  if (!handle.inspectorKeyGenerated)
    return `inspector: ${handle.inspectorUrl} (log in with server.inspector.key)`;
  const link = `${handle.inspectorUrl}#key=${handle.inspectorKey}`;
  if (terminal) return `inspector: ${link}`;
  const file = path.join(handle.stateDir, INSPECTOR_LINK_FILE);
  writeFileSync(file, `${link}\n`, { mode: 0o600 });
  // An existing file keeps its mode through a write: set it.
  chmodSync(file, 0o600);
  return `inspector: ${handle.inspectorUrl} (its login link is in ${file}, readable by this user only)`;
}

/**
 * Resolves with what stops the gateway: `io.stop` when given, else the first SIGINT or SIGTERM (a second one ends
 * the process at once).
 */
function waitForStopSignal(io: CliIo): Promise<string> {
  if (io.stop) return io.stop;
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      const force = (again: NodeJS.Signals) => {
        io.stderr.write(`hooks serve: ${again} again, exiting without waiting\n`);
        process.exit(1);
      };
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

/**
 * SIGHUP reloads the config, as daemons do. Signals are the process's: a caller that runs `serve` in its own
 * process (`io.stop`) reloads through the file instead.
 */
function reloadOnHangUp(io: CliIo, handle: GatewayHandle): () => void {
  if (io.stop) return () => undefined;
  const onHangUp = () => void handle.reload("SIGHUP");
  process.on("SIGHUP", onHangUp);
  return () => process.off("SIGHUP", onHangUp);
}

async function serve(options: ServeOptions, io: CliIo): Promise<void> {
  const loaded = loadGatewayConfig({ config: options.config });
  if (loaded.issues.length > 0) {
    // The gateway will not start; list the plugin's problems too, so one round shows them all.
    const hooks = await checkHooksConfig(loaded.raw, {
      configDir: loaded.configDir,
      mainSessionKey: loaded.sections.session.mainKey,
      channels: loaded.sections.channels,
      agents: configuredAgents(loaded.raw),
    });
    // As `hooks check` lists them: one problem per unset variable, nothing about the placeholder's own text.
    const { issues } = foldConfigProblems([...loaded.issues, ...hooks.issues], hooks.warnings);
    io.stderr.write(
      `hooks serve: ${loaded.file} has ${issues.length} problem(s):\n${issues.map((i) => `  - ${formatIssue(i)}\n`).join("")}`,
    );
    io.setExitCode(1);
    return;
  }
  const level = process.env.HOOKS_LOG_LEVEL;
  const logFile = resolveLogFile(loaded.sections.log, loaded.configDir, options.logFile);
  const logger = createGatewayLogger({
    out: io.stdout,
    ...(isLogLevel(level) && { level }),
    ...(logFile !== undefined && { file: logFile }),
  });
  const stopSignal = waitForStopSignal(io);
  let handle: GatewayHandle;
  try {
    handle = await startGateway({
      config: loaded.raw,
      configDir: loaded.configDir,
      stateDir: options.stateDir,
      logger,
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.record !== undefined && { recordFile: options.record }),
      ...(options.capture !== undefined && { captureDir: options.capture }),
      source: { file: loaded.file, load: loaded.readAgain },
    });
  } catch (error) {
    if (isConfigError(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new Error(
        `cannot listen (${code}): ${(error as Error).message}; choose another --host or --port`,
      );
    }
    throw error;
  }
  const inspector = inspectorLine(handle, io.terminal ?? io.stdout.isTTY === true);
  io.stdout.write(readyBanner(loaded, handle, options.record, logFile?.path, inspector));
  const stopReloading = reloadOnHangUp(io, handle);
  const signal = await stopSignal;
  logger.info(`received ${signal}`);
  await handle.close();
  // The key in it died with the gateway.
  rmSync(path.join(handle.stateDir, INSPECTOR_LINK_FILE), { force: true });
  // Only now: a SIGHUP while stopping is answered "stopping", where Node's default would end the process mid-stop.
  stopReloading();
  await logger.close();
}

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command("serve")
    .description(
      "run the reference gateway: the hooks intake with session, heartbeat, runner and delivery subsystems",
    )
    .option("-c, --config <file>", "gateway config (JSON5); default ./gateway.json5, else the bundled demo")
    .option("--host <host>", "address to bind (default: server.host, 127.0.0.1)")
    .option("-p, --port <port>", "port to bind, 0 for any free port (default: server.port, 18789)", parsePort)
    .option(
      "--state-dir <dir>",
      "directory of the state database (queue, transcript, sessions, outbox); read it with `hooks state`",
      DEFAULT_STATE_DIR,
    )
    .option("--record <file>", "append every bus event to this file as JSON lines")
    .option(
      "--log-file <file>",
      "also write the JSON log lines to this file, rotated by size (default: log.file of the config)",
    )
    .addOption(
      new Option(
        "--capture [dir]",
        `write every authenticated hook request as a fixture file into <dir> (default: ./${DEFAULT_CAPTURE_DIR}; payloads on disk: development only)`,
      ).preset(DEFAULT_CAPTURE_DIR),
    )
    .addHelpText(
      "after",
      "\nLogs go to stdout: readable lines on a terminal, JSON lines otherwise (HOOKS_LOG_LEVEL=debug|info|warn|error),\nand as JSON lines to --log-file or log.file when set.\nStops on SIGINT/SIGTERM after in-flight requests and agent turns finish (at most 10 s).\nReloads the config on SIGHUP and when the file changes; a config with problems is logged and not applied.",
    )
    .action((options: ServeOptions) => serve(options, io));
}

/** @module Starts the reference gateway: bus, subsystems, the plugin on a host it builds, and the HTTP server. */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import proxyAddr from "proxy-addr";
import type { ConfigIssue, HookBus, HookPlugin, HooksStatus } from "../index.js";
import {
  type ConfigReloader,
  type ConfigSource,
  createConfigReloader,
  type ReloadOutcome,
  statusOf,
} from "./config-reload.js";
import type { GatewaySections } from "./gateway-config.js";
import { parseGatewaySections, REQUEST_TIMEOUT_MS } from "./gateway-config.js";
import { clientUrl, type Listening, startListening } from "./gateway-listen.js";
import { stopGateway } from "./gateway-stop.js";
import { startSubsystems } from "./gateway-subsystems.js";
import { resolveLogFile } from "./log-file.js";
import { createGatewayLogger, type GatewayLogger } from "./logger.js";
import { METRICS_PATH } from "./metrics-endpoint.js";
import { registerPlugin } from "./plugin-host.js";
import { PluginServices } from "./plugin-services.js";
import { createRouter } from "./router.js";
import { DEFAULT_STATE_DIR } from "./state-db.js";

export type { ConfigSource, ReloadOutcome };
export { DEFAULT_STATE_DIR };

/** How long a stop waits for in-flight requests and running turns before cutting them. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export interface StartGatewayOptions {
  /** The gateway config after `${VAR}` substitution (what `loadGatewayConfigFile` returns). */
  config: unknown;
  /** Directory relative paths in the config resolve against; default: cwd. */
  configDir?: string;
  /** Override `server.host` / `server.port`; port 0 picks a free port. */
  host?: string;
  port?: number;
  /**
   * Override `server.inspector.port`. Unset while the gateway takes any free port (`port` 0): the inspector takes
   * one too, so gateways started side by side (tests, benchmarks) do not collide on its default port.
   */
  inspectorPort?: number;
  /** Default: `./.hooks-state`; the database `state.sqlite` lives there. */
  stateDir?: string;
  /** Append every bus event to this JSON-lines file. */
  recordFile?: string;
  /** Write every authenticated hook request as a fixture file into this directory (development aid). */
  captureDir?: string;
  /** Default: a logger to stdout (and to the `log.file` of the config, rotated), closed with the gateway. */
  logger?: GatewayLogger;
  /** Default: a fresh `createHooksPlugin()` (with `--capture` wired in when `captureDir` is set). */
  plugin?: HookPlugin;
  stopTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Where `config` came from, so that `reload()` can read it again; the file is watched and reloaded on change
   * unless `source.watch` is false. Without it, `reload()` reports that there is nothing to read again.
   */
  source?: ConfigSource;
}

export interface GatewayHandle {
  /** Base URL a client on this machine can use (`http://127.0.0.1:PORT` for a wildcard bind). */
  url: string;
  host: string;
  port: number;
  bus: HookBus;
  stateDir: string;
  sections: GatewaySections;
  /** `hooks.path` as the plugin uses it, or undefined when hooks are disabled. */
  hooksPath: string | undefined;
  /** What the plugin serves (endpoints, mappings, transform status), when it says; a reload updates it. */
  readonly hooks: HooksStatus | undefined;
  /** Where Prometheus scrapes this gateway, or undefined when `server.metrics` is false. */
  metricsUrl: string | undefined;
  /** The inspector page (`http://127.0.0.1:PORT/inspector`, no key), or undefined when it is off or hooks are disabled. */
  inspectorUrl: string | undefined;
  /** The key its page logs in with (`#key=` in the link); undefined with the inspector off. Never logged. */
  inspectorKey: string | undefined;
  /** Whether that key was made for this start (`hooks serve` prints it) rather than configured (never printed). */
  inspectorKeyGenerated: boolean;
  /**
   * Reads the config again (`source`) and swaps in what may change live, or keeps the running config; logs one line
   * either way. `hooks serve` calls it on SIGHUP and when the file changes.
   */
  reload(trigger?: string): Promise<ReloadOutcome>;
  /** Graceful stop: refuse new connections, finish requests and turns (bounded), commit and close the state. Idempotent. */
  close(): Promise<void>;
}

/** What startGateway works out from its options before anything starts. */
interface GatewaySetup {
  configDir: string;
  env: NodeJS.ProcessEnv;
  sections: GatewaySections;
  /** The problems of the gateway's sections; the plugin's are reported with them. */
  issues: ConfigIssue[];
  logger: GatewayLogger;
  /** Whether the logger is the gateway's own (closed with it) rather than its caller's (only flushed). */
  ownLogger: boolean;
  stateDir: string;
  stopTimeoutMs: number;
  /** The key the inspector's page logs in with: `server.inspector.key`, else one made for this start. */
  inspectorKey: string;
}

function resolveSetup(options: StartGatewayOptions): GatewaySetup {
  const configDir = options.configDir ?? process.cwd();
  const env = options.env ?? process.env;
  const { sections, issues } = parseGatewaySections(options.config, env, configDir);
  const logFile = resolveLogFile(sections.log, configDir);
  return {
    configDir,
    env,
    sections,
    issues,
    logger: options.logger ?? createGatewayLogger(logFile ? { file: logFile } : {}),
    ownLogger: options.logger === undefined,
    stateDir: path.resolve(options.stateDir ?? DEFAULT_STATE_DIR),
    stopTimeoutMs: options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
    // Made before the plugin registers: it is one of the secrets the plugin's inspector hides.
    inspectorKey: sections.server.inspector.key ?? randomBytes(24).toString("base64url"),
  };
}

/** Throws a ConfigError listing every problem (gateway sections and plugin slice) before anything starts. */
export async function startGateway(options: StartGatewayOptions): Promise<GatewayHandle> {
  const setup = resolveSetup(options);
  const { configDir, env, sections, logger } = setup;
  const bus: HookBus = new EventEmitter();
  const router = createRouter(logger);
  const services = new PluginServices(logger);
  const { plugin, host, pluginPath } = registerPlugin({
    ...setup,
    config: options.config,
    bus,
    router,
    services,
    plugin: options.plugin,
    captureDir: options.captureDir,
  });
  const requestTimeoutMs = requestTimeoutFor(statusOf(plugin), sections);
  const subsystems = startSubsystems({ ...setup, host, bus, services, recordFile: options.recordFile });

  // The plugin's trusted proxies are read per connection: a reload changes them for the next one.
  let exempt = trustedPeers(options.config);
  const listening = await startListening({
    services,
    router,
    plugin,
    sections,
    logger,
    pluginPath,
    host: options.host,
    port: options.port,
    inspectorPort: options.inspectorPort,
    inspectorKey: setup.inspectorKey,
    exemptAddress: (address) => exempt?.(address) ?? false,
    requestTimeoutMs,
  }).catch(async (error: unknown) => {
    await subsystems.stop();
    throw error;
  });
  const { server, inspector } = listening;
  const reloader = options.source
    ? createConfigReloader(options.source, {
        plugin,
        sections,
        agents: host.agents,
        env,
        configDir,
        logger,
        applied(config, status) {
          exempt = trustedPeers(config);
          server.setRequestTimeout(requestTimeoutFor(status, sections));
        },
      })
    : undefined;
  const { ownLogger, stopTimeoutMs } = setup;
  const stop = () =>
    stopGateway({ reloader, services, inspector, server, subsystems, logger, ownLogger, stopTimeoutMs });
  return gatewayHandle({ setup, bus, plugin, pluginPath, listening, reloader, stop });
}

/** What the handle of a started gateway reads. */
interface HandleParts {
  setup: GatewaySetup;
  bus: HookBus;
  plugin: HookPlugin;
  pluginPath: string | undefined;
  listening: Listening;
  reloader: ConfigReloader | undefined;
  /** The graceful stop; the handle runs it once, however often it is asked. */
  stop: () => Promise<void>;
}

function gatewayHandle(parts: HandleParts): GatewayHandle {
  const { sections } = parts.setup;
  const { server, inspector } = parts.listening;
  const { plugin, reloader } = parts;
  const url = clientUrl(server.host, server.port);
  let closing: Promise<void> | undefined;
  return {
    url,
    host: server.host,
    port: server.port,
    bus: parts.bus,
    stateDir: parts.setup.stateDir,
    sections,
    hooksPath: parts.pluginPath,
    metricsUrl: sections.server.metrics ? `${url}${METRICS_PATH}` : undefined,
    inspectorUrl: inspector?.url,
    inspectorKey: inspector?.key,
    inspectorKeyGenerated: inspector?.generatedKey ?? false,
    get hooks() {
      return statusOf(plugin);
    },
    reload(trigger = "reload") {
      if (!reloader)
        return Promise.resolve({
          applied: false,
          issues: [{ path: "", message: "started without a config source: nothing to read again" }],
        });
      return reloader.reload(trigger);
    },
    close() {
      closing ??= parts.stop();
      return closing;
    },
  };
}

/** The plugin enforces its own body deadline; Node's request timeout only backs it up, above it. */
function requestTimeoutFor(status: HooksStatus | undefined, sections: GatewaySections): number {
  return Math.max(REQUEST_TIMEOUT_MS, (status?.bodyTimeoutMs ?? 0) + sections.server.headersTimeoutMs);
}

/**
 * The plugin's trusted proxies (`hooks.trustedProxies`, already checked by the plugin), as a test of a socket's
 * peer: they are not held to the per-address caps, since every client behind them shares their address.
 */
function trustedPeers(config: unknown): ((address: string) => boolean) | undefined {
  const list = (config as { hooks?: { trustedProxies?: unknown } } | undefined)?.hooks?.trustedProxies;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const trust = proxyAddr.compile(list.map(String));
  return (address) => trust(address, 0);
}

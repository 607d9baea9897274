/** @module Starts the reference gateway: bus, subsystems, the plugin on a host it builds, and the HTTP server. */
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import proxyAddr from "proxy-addr";
import {
  ConfigError,
  configuredAgents,
  createHooksPlugin,
  type HookBus,
  type HookPlugin,
  type HooksStatus,
  type HostService,
  isConfigError,
  type MetricsRegistry,
  type PluginHost,
} from "../index.js";
import { type ConfigSource, createConfigReloader, type ReloadOutcome, statusOf } from "./config-reload.js";
import { startDeliverySubsystem } from "./delivery-subsystem.js";
import { startEventRecorder } from "./event-recorder.js";
import type { GatewaySections } from "./gateway-config.js";
import { parseGatewaySections, REQUEST_TIMEOUT_MS } from "./gateway-config.js";
import { startHeartbeatSubsystem } from "./heartbeat-subsystem.js";
import { listenGatewayServer } from "./http-server.js";
import { type InspectorServer, startInspectorServer } from "./inspector-server.js";
import { resolveLogFile } from "./log-file.js";
import { createGatewayLogger, type GatewayLogger } from "./logger.js";
import { createMetricsRoute, credentialThrottleOf, METRICS_PATH } from "./metrics-endpoint.js";
import { createOutbox } from "./outbox.js";
import { createRequestCapture } from "./request-capture.js";
import { createRouter } from "./router.js";
import { createRunner } from "./runners/create-runner.js";
import { createSessionStore } from "./session-store.js";
import { startSessionSubsystem } from "./session-subsystem.js";
import { checkStateHolds } from "./state-check.js";
import { DEFAULT_STATE_DIR, openStateDb } from "./state-db.js";
import { startRetention } from "./state-retention.js";
import { logWriteError } from "./write-errors.js";

export type { ConfigSource, ReloadOutcome };
export { DEFAULT_STATE_DIR };

/** Reasons a heartbeat's log line lists by name; the transcript has them all. */
const LOGGED_REASONS = 10;
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

/** Whether a bind address is reachable from this machine only. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

function clientUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** Throws a ConfigError listing every problem (gateway sections and plugin slice) before anything starts. */
export async function startGateway(options: StartGatewayOptions): Promise<GatewayHandle> {
  const configDir = options.configDir ?? process.cwd();
  const env = options.env ?? process.env;
  const { sections, issues } = parseGatewaySections(options.config, env, configDir);
  const ownLogger = options.logger === undefined;
  const logFile = resolveLogFile(sections.log, configDir);
  const logger = options.logger ?? createGatewayLogger(logFile ? { file: logFile } : {});
  // A state or record write that fails is logged and survived, never a crash.
  const onError = logWriteError(logger);
  const stateDir = path.resolve(options.stateDir ?? DEFAULT_STATE_DIR);
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;

  const bus: HookBus = new EventEmitter();
  const router = createRouter(logger);
  const services: HostService[] = [];
  const host: PluginHost = {
    config: options.config,
    configDir,
    env,
    logger,
    bus,
    channels: sections.channels,
    // `agents.entries` of the file, read as OpenClaw reads its own; none declared: one agent, `main`.
    agents: configuredAgents(options.config),
    mainSessionKey: sections.session.mainKey,
    stateDir,
    registerHttpRoute: (route) => router.add(route),
    registerService: (service) => services.push(service),
  };
  // Registration validates the plugin's config: its problems and the gateway's are reported together.
  const plugin =
    options.plugin ??
    createHooksPlugin({
      ...(options.captureDir ? { capture: createRequestCapture(options.captureDir, logger) } : {}),
      // Nothing serves them: nothing is counted either.
      ...(sections.server.metrics ? {} : { metrics: false }),
    });
  try {
    plugin.register(host);
  } catch (error) {
    if (!isConfigError(error)) throw error;
    throw new ConfigError([...issues, ...error.issues]);
  }
  // The plugin's one route, before the gateway adds its own.
  const pluginPath = router.routes[0]?.path;
  if (sections.server.metrics) {
    if (pluginPath === METRICS_PATH) {
      issues.push({
        path: "hooks.path",
        message: `${METRICS_PATH} is where the gateway serves its metrics: choose another path, or set server.metrics to false`,
      });
    } else {
      const throttle = credentialThrottleOf(plugin);
      router.add(
        createMetricsRoute({ hooks: registryOf(plugin), token: sections.server.metricsToken, throttle }),
      );
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const hooksStatus = statusOf(plugin);

  // Opened before anything starts: without better-sqlite3, or with a database it cannot use, the gateway does not start.
  const state = openStateDb(stateDir, {
    onError,
    onGiveUp: (writes) =>
      logger.error(
        "state writes given up after failing for too long; the journal finishes their requests at the next start",
        { writes },
      ),
  });
  // The plugin's journal marks a request done only once the events it caused are committed here.
  host.persisted = () => state.committed();
  const retention = startRetention(state, { retainDays: sections.state.retainDays, logger });

  // First subscriber, so the record shows events in emission order even when a listener emits more.
  const recorder = options.recordFile
    ? startEventRecorder(bus, path.resolve(options.recordFile), { onError })
    : undefined;
  bus.on("hooks:request", (event) =>
    logger.request({
      method: event.method,
      hook: event.hook,
      status: event.status,
      durationMs: event.durationMs,
      requestId: event.source.requestId,
      mappingId: event.mappingId,
    }),
  );

  const store = createSessionStore(state, sections.session.lastRoute);
  // Asked by the plugin's start, before it takes requests: a database that lost what was acknowledged stops here.
  host.checkStored = (events) =>
    checkStateHolds(state, store, events, { retainDays: sections.state.retainDays });
  const outbox = createOutbox(state);
  const session = startSessionSubsystem({
    bus,
    store,
    runner: createRunner(sections.runner, configDir, env),
    logger,
    mainSessionKey: sections.session.mainKey,
    defaultAgentId: host.agents!.defaultId,
  });
  const heartbeat = startHeartbeatSubsystem({
    bus,
    everySeconds: sections.heartbeat.everySeconds,
    beat(reasons) {
      const drained = store.drain(reasons);
      // Under load one heartbeat answers thousands of finished runs; the transcript keeps every reason, the
      // log line the first few and the count.
      const shown = reasons.length > LOGGED_REASONS ? [...reasons.slice(0, LOGGED_REASONS), "…"] : reasons;
      logger.info("heartbeat", { reasons: shown.join(","), reasonCount: reasons.length, drained });
    },
  });
  const delivery = startDeliverySubsystem({
    bus,
    outbox,
    channels: sections.channels,
    logger,
    lastRoute: () => store.lastRoute(),
    setLastRoute: (route) => store.setLastRoute(route),
  });

  const started: HostService[] = [];
  const stopEverything = async () => {
    heartbeat.stop();
    delivery.stop();
    for (const service of started.reverse()) {
      try {
        await service.stop();
      } catch (error) {
        logger.error(`service ${service.id} failed to stop: ${(error as Error).message}`);
      }
    }
    recorder?.stop();
    await retention.stop();
    state.close();
  };

  // The plugin's trusted proxies are read per connection: a reload changes them for the next one.
  let exempt = trustedPeers(options.config);
  let server: Awaited<ReturnType<typeof listenGatewayServer>> | undefined;
  let inspector: InspectorServer | undefined;
  try {
    for (const service of services) {
      await service.start();
      started.push(service);
    }
    server = await listenGatewayServer(router.handle, {
      host: options.host ?? sections.server.host,
      port: options.port ?? sections.server.port,
      headersTimeoutMs: sections.server.headersTimeoutMs,
      maxConnections: sections.server.maxConnections,
      maxConnectionsPerAddress: sections.server.maxConnectionsPerAddress,
      maxPendingPerAddress: sections.server.maxPendingPerAddress,
      exemptAddress: (address) => exempt?.(address) ?? false,
      requestTimeoutMs: requestTimeoutFor(hooksStatus, sections),
    });
    if (sections.server.inspector.enabled && pluginPath !== undefined) {
      const port = options.port ?? sections.server.port;
      const inspectorPort = options.inspectorPort ?? (port === 0 ? 0 : sections.server.inspector.port);
      // The intake is what senders depend on: a second gateway on this machine, whose inspector port is taken,
      // still serves, and says how to give its inspector a port of its own.
      inspector = await startInspectorServer({
        plugin,
        sections,
        port: inspectorPort,
        clientUrl,
        logger,
      }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EADDRINUSE" && error.code !== "EACCES" && error.code !== "EADDRNOTAVAIL")
          throw error;
        logger.warn(
          `inspector not started: cannot listen on ${sections.server.inspector.host}:${inspectorPort} (${error.code}); set server.inspector.port to a free port, or 0 for any`,
        );
        return undefined;
      });
      const { host } = sections.server.inspector;
      if (inspector && !isLoopback(host)) {
        logger.warn(
          `the inspector listens on ${host}: it shows payloads, and its key and session cookie cross the network unencrypted; keep server.inspector.host on loopback and reach it through an SSH tunnel`,
        );
      }
    }
  } catch (error) {
    await server?.close(0);
    await session.stop();
    await stopEverything();
    throw error;
  }

  const listening = server;
  const reloader = options.source
    ? createConfigReloader(options.source, {
        plugin,
        sections,
        agents: host.agents!,
        env,
        configDir,
        logger,
        applied(config, status) {
          exempt = trustedPeers(config);
          listening.setRequestTimeout(requestTimeoutFor(status, sections));
        },
      })
    : undefined;

  let closing: Promise<void> | undefined;
  const close = async () => {
    // A reload under way finishes first: it swaps a config, or leaves the running one, never half of either.
    await reloader?.close();
    const deadline = Date.now() + stopTimeoutMs;
    // No new work from here: agent turns waiting for a slot stay in the journal for the next start, instead of
    // starting as running ones end and being cut at the deadline.
    for (const service of services) service.drain?.();
    await inspector?.close();
    logger.info("stopping: no new connections; finishing in-flight requests and agent turns", {
      requests: listening.inFlight,
      turns: session.running,
    });
    // A request still open at the deadline may be waiting for its turn (waitForCompletion): the turns are
    // aborted first, so that caller is answered with the turn's end instead of a cut connection.
    const abortTurns = async () => {
      if (session.running > 0) {
        logger.warn("stop deadline passed: aborting running agent turns", { turns: session.running });
      }
      await session.stop();
    };
    const cut = await listening.close(stopTimeoutMs, abortTurns);
    if (cut > 0) logger.warn("stop deadline passed: in-flight requests were cut", { requests: cut });
    if (!(await session.idle(Math.max(0, deadline - Date.now())))) await abortTurns();
    await session.stop();
    await stopEverything();
    logger.info("stopped");
    await (ownLogger ? logger.close() : logger.flush());
  };

  return {
    url: clientUrl(listening.host, listening.port),
    host: listening.host,
    port: listening.port,
    bus,
    stateDir,
    sections,
    hooksPath: pluginPath,
    metricsUrl: sections.server.metrics
      ? `${clientUrl(listening.host, listening.port)}${METRICS_PATH}`
      : undefined,
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
      closing ??= close();
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

/** The plugin's metrics registry, when it is one that keeps one (a `createHooksPlugin` instance). */
function registryOf(plugin: HookPlugin): MetricsRegistry | undefined {
  return "metrics" in plugin && typeof plugin.metrics === "function"
    ? (plugin.metrics() as MetricsRegistry | undefined)
    : undefined;
}

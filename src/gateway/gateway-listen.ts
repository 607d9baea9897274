/** @module Opens the reference gateway to traffic: starts the plugin's services, listens, and starts the inspector; the server is closed again when the inspector fails to start. */
import type { HookPlugin } from "../index.js";
import type { GatewaySections } from "./gateway-config.js";
import { type GatewayServer, listenGatewayServer } from "./http-server.js";
import { type InspectorServer, startInspectorServer } from "./inspector-server.js";
import type { GatewayLogger } from "./logger.js";
import type { PluginServices } from "./plugin-services.js";
import type { Router } from "./router.js";

export interface ListenOptions {
  services: PluginServices;
  router: Router;
  plugin: HookPlugin;
  sections: GatewaySections;
  logger: GatewayLogger;
  /** The plugin's route; without one (hooks disabled) there is no inspector either. */
  pluginPath: string | undefined;
  /** Overrides of `server.host` / `server.port` / `server.inspector.port` (see StartGatewayOptions). */
  host: string | undefined;
  port: number | undefined;
  inspectorPort: number | undefined;
  inspectorKey: string;
  /** Peers the per-address caps do not apply to. */
  exemptAddress: (address: string) => boolean;
  requestTimeoutMs: number;
}

export interface Listening {
  server: GatewayServer;
  /** Undefined when it is off, hooks are disabled, or its port was not free. */
  inspector: InspectorServer | undefined;
}

/** Whether a bind address is reachable from this machine only. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

export function clientUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** Starts the plugin's services, then the server, then (when it is on) the inspector. */
export async function startListening(options: ListenOptions): Promise<Listening> {
  const { sections } = options;
  await options.services.start();
  const port = options.port ?? sections.server.port;
  const server = await listenGatewayServer(options.router.handle, {
    host: options.host ?? sections.server.host,
    port,
    headersTimeoutMs: sections.server.headersTimeoutMs,
    maxConnections: sections.server.maxConnections,
    maxConnectionsPerAddress: sections.server.maxConnectionsPerAddress,
    maxPendingPerAddress: sections.server.maxPendingPerAddress,
    exemptAddress: options.exemptAddress,
    requestTimeoutMs: options.requestTimeoutMs,
  });
  if (!sections.server.inspector.enabled || options.pluginPath === undefined) {
    return { server, inspector: undefined };
  }
  const inspectorPort = options.inspectorPort ?? (port === 0 ? 0 : sections.server.inspector.port);
  try {
    return { server, inspector: await startInspector(options, inspectorPort) };
  } catch (error) {
    await server.close(0);
    throw error;
  }
}

/**
 * Starts the inspector on `port`. The intake is what senders depend on: a second gateway on this machine, whose
 * inspector port is taken, still serves, and says how to give its inspector a port of its own.
 */
async function startInspector(options: ListenOptions, port: number): Promise<InspectorServer | undefined> {
  const { sections, logger } = options;
  const inspector = await startInspectorServer({
    plugin: options.plugin,
    sections,
    key: options.inspectorKey,
    port,
    clientUrl,
    logger,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EADDRINUSE" && error.code !== "EACCES" && error.code !== "EADDRNOTAVAIL") throw error;
    logger.warn(
      `inspector not started: cannot listen on ${sections.server.inspector.host}:${port} (${error.code}); set server.inspector.port to a free port, or 0 for any`,
    );
    return undefined;
  });
  const { host } = sections.server.inspector;
  if (inspector && !isLoopback(host)) {
    logger.warn(
      `the inspector listens on ${host}: it shows payloads, and its key and session cookie cross the network unencrypted; keep server.inspector.host on loopback and reach it through an SSH tunnel`,
    );
  }
  return inspector;
}

/** @module A minimal host for plugin tests: a real node:http server on loopback, a real bus, a recording logger, and a state directory of its own (so the plugin's journal is on, as in production). */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import type { HookBus, HookEventName, HookEventPayload } from "../../src/events.js";
import type {
  HookPlugin,
  HostLogger,
  HostService,
  HttpRoute,
  LogFields,
  PluginHost,
} from "../../src/host/contract.js";

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields?: LogFields;
}

export interface RecordedEvent<E extends HookEventName = HookEventName> {
  event: E;
  payload: HookEventPayload<E>;
}

export interface TestHost {
  url: string;
  /** The host's state directory (the journal is in its `hooks-journal`), or undefined when started without one. */
  stateDir: string | undefined;
  bus: HookBus;
  logs: LogLine[];
  events: RecordedEvent[];
  services: HostService[];
  routes: HttpRoute[];
  eventsOf<E extends HookEventName>(event: E): HookEventPayload<E>[];
  /** Resolves with the first event of that name whose payload passes `where`, already recorded or still to come. */
  waitForEvent<E extends HookEventName>(
    event: E,
    where?: (payload: HookEventPayload<E>) => boolean,
  ): Promise<HookEventPayload<E>>;
  close(): Promise<void>;
}

const EVENT_NAMES: HookEventName[] = [
  "session:system-event",
  "session:agent-turn",
  "session:agent-turn-finished",
  "heartbeat:request",
  "delivery:send",
  "hooks:request",
];

export async function startTestHost(
  plugin: HookPlugin,
  config: unknown,
  options: {
    configDir?: string;
    channels?: readonly string[];
    /** Default: a temp dir made for this host and removed on close; `false` for a host without one (no journal). */
    stateDir?: string | false;
    /** The host's admission of agent turns (the host contract's `admitAgentTurn`); absent: admitted. */
    admitAgentTurn?: PluginHost["admitAgentTurn"];
    /** The server's header limit in bytes (node's default: 16 KiB), for a host that takes larger headers. */
    maxHeaderSize?: number;
  } = {},
): Promise<TestHost> {
  const ownStateDir =
    options.stateDir === undefined ? mkdtempSync(path.join(os.tmpdir(), "hooks-host-")) : undefined;
  const stateDir = options.stateDir === false ? undefined : (options.stateDir ?? ownStateDir);
  const bus: HookBus = new EventEmitter();
  const logs: LogLine[] = [];
  const events: RecordedEvent[] = [];
  const routes: HttpRoute[] = [];
  const services: HostService[] = [];
  for (const event of EVENT_NAMES) {
    bus.on(event, (payload: unknown) => events.push({ event, payload } as RecordedEvent));
  }
  const log =
    (level: LogLine["level"]) =>
    (message: string, fields?: LogFields): void => {
      logs.push(fields ? { level, message, fields } : { level, message });
    };
  const logger: HostLogger = {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
  };
  const host: PluginHost = {
    config,
    configDir: options.configDir ?? process.cwd(),
    logger,
    bus,
    registerHttpRoute: (route) => routes.push(route),
    registerService: (service) => services.push(service),
  };
  if (options.channels) host.channels = options.channels;
  if (options.admitAgentTurn) host.admitAgentTurn = options.admitAgentTurn;
  if (stateDir !== undefined) host.stateDir = stateDir;
  try {
    plugin.register(host);
    for (const service of services) await service.start();
  } catch (error) {
    // A plugin that refuses its config never gets a close(): its state dir goes now.
    if (ownStateDir !== undefined) rmSync(ownStateDir, { recursive: true, force: true });
    throw error;
  }

  const server: Server = createServer({ maxHeaderSize: options.maxHeaderSize }, (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const route = routes.find((r) => path === r.path || path.startsWith(`${r.path}/`));
    if (!route) {
      res.statusCode = 404;
      res.end("no route");
      return;
    }
    void route.handler(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    stateDir,
    bus,
    logs,
    events,
    services,
    routes,
    eventsOf: (event) => events.filter((e) => e.event === event).map((e) => e.payload) as never,
    waitForEvent: (event, where) =>
      new Promise((resolve) => {
        const seen = events.find((e) => e.event === event && (!where || where(e.payload as never)));
        if (seen) return resolve(seen.payload as never);
        const listener = (payload: never) => {
          if (where && !where(payload)) return;
          bus.off(event, listener as never);
          resolve(payload);
        };
        bus.on(event, listener as never);
      }),
    async close() {
      for (const service of services) await service.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownStateDir !== undefined) rmSync(ownStateDir, { recursive: true, force: true });
    },
  };
}

/** POSTs JSON (or a raw string) and returns status, headers and the parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** @module The host contract: the small interface the plugin needs from a gateway (SPEC §2). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HookBus } from "../events.js";

export type LogFields = Record<string, string | number | boolean | undefined>;

export interface HostLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * Answers the request itself, possibly after it returns: the plugin's handler returns at once and ends the
 * response when the body has arrived (at the end of that event-loop turn), so a host must not treat a handler
 * that returned without ending the response as one that did not answer.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface HttpRoute {
  /** Path prefix the route owns; requests at or below it reach the handler. */
  path: string;
  match: "prefix";
  /** `plugin`: the gateway does no auth of its own; the plugin authenticates every request. */
  auth: "plugin";
  handler: RouteHandler;
}

export interface HostService {
  id: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** An authenticated request as received, credentials removed: what `hooks serve --capture` writes as a fixture. */
export interface CapturedRequest {
  requestId: string;
  method: string;
  hook: string;
  /** Request headers without Authorization, X-Service-Token, Cookie and Proxy-Authorization. */
  headers: Record<string, string>;
  /** Query parameters without `token`. */
  query: Record<string, string>;
  rawBody: Buffer;
}

export interface PluginHost {
  /** The whole gateway config, as the gateway loaded it (env substitution already applied). */
  config: unknown;
  /** Directory of the config file; relative config paths (transformsDir) resolve against it. Default: cwd. */
  configDir?: string;
  logger: HostLogger;
  bus: HookBus;
  /** Channel ids the gateway can deliver to. Default: the seven built-in channels (no mattermost). */
  channels?: readonly string[];
  /** The main session's key, which no caller may target. Default: `main`. */
  mainSessionKey?: string;
  /**
   * Optional: receives every authenticated request whose body was read, before it is dispatched. Only a host
   * that was asked to record payloads (a development aid) provides it; the plugin never logs payloads itself.
   */
  captureRequest?(request: CapturedRequest): void;
  registerHttpRoute(route: HttpRoute): void;
  registerService(service: HostService): void;
}

export interface HookPlugin {
  id: string;
  name: string;
  configSchema: unknown;
  register(host: PluginHost): void;
}

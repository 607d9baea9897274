/** @module `GET /metrics`: the plugin's registry and the process's own metrics in Prometheus text format, behind an optional bearer token. */
import type { IncomingMessage } from "node:http";
import { collectDefaultMetrics, Registry } from "prom-client";
import {
  type AuthThrottle,
  createTokenComparer,
  type HookPlugin,
  type HttpRoute,
  type MetricsRegistry,
} from "../index.js";
import { sendGatewayError } from "./router.js";

export const METRICS_PATH = "/metrics";

export interface MetricsRouteOptions {
  /** The plugin's registry, when it keeps one (undefined: hooks disabled, or a plugin without metrics). */
  hooks: MetricsRegistry | undefined;
  /** `server.metricsToken`: when set, a scrape must send it as `Authorization: Bearer`. */
  token: string | undefined;
  /**
   * Counts wrong tokens per client address as the hook token's are counted (the plugin's store, window and limit):
   * past the limit an address gets 429, so the token cannot be guessed at wire speed. Undefined: hooks disabled.
   */
  throttle?: AuthThrottle | undefined;
}

/**
 * The plugin's counter of failed credentials of the gateway's own (`scope`: the metrics token, the inspector key),
 * when it is one that keeps one (a `createHooksPlugin` instance).
 */
export function credentialThrottleOf(plugin: HookPlugin, scope = "metrics"): AuthThrottle | undefined {
  return "authThrottle" in plugin && typeof plugin.authThrottle === "function"
    ? (plugin.authThrottle(scope) as AuthThrottle | undefined)
    : undefined;
}

const BEARER = /^bearer[ \t]+(.+)$/i;

/** Compared in constant time: the time taken says nothing about the token or its length. */
function bearerCheck(token: string): (req: IncomingMessage) => boolean {
  const matches = createTokenComparer(token);
  return (req) => {
    const match = BEARER.exec(req.headers.authorization?.trim() ?? "");
    return match !== null && matches(match[1]!.trim());
  };
}

export function createMetricsRoute(options: MetricsRouteOptions): HttpRoute {
  const authorized = options.token === undefined ? () => true : bearerCheck(options.token);
  let served: Registry | undefined;
  // The process metrics start with the first scrape: their GC observer and event-loop monitor then cost nothing in
  // a gateway nobody scrapes (and nothing in tests that start many gateways in one process).
  const registry = (): Registry => {
    if (served === undefined) {
      const own = new Registry();
      collectDefaultMetrics({ register: own });
      served = options.hooks ? Registry.merge([options.hooks, own]) : own;
    }
    return served;
  };

  return {
    path: METRICS_PATH,
    match: "prefix",
    auth: "plugin",
    async handler(req, res) {
      const url = req.url ?? "/";
      const queryStart = url.indexOf("?");
      const pathname = queryStart === -1 ? url : url.slice(0, queryStart);
      if (pathname !== METRICS_PATH) {
        sendGatewayError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
        return true;
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.setHeader("Allow", "GET, HEAD");
        sendGatewayError(res, 405, "METHOD_NOT_ALLOWED", "Metrics are read with GET.");
        return true;
      }
      if (options.token !== undefined) {
        const { remoteAddress } = req.socket;
        if (!authorized(req)) {
          const retryAfter = await options.throttle?.failed(remoteAddress, req.headers);
          if (retryAfter !== undefined) {
            res.setHeader("Retry-After", String(retryAfter));
            sendGatewayError(
              res,
              429,
              "AUTH_THROTTLED",
              "Too many failed authentications from this address; retry later.",
            );
            return true;
          }
          res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
          sendGatewayError(res, 401, "UNAUTHORIZED", "The metrics token is missing or not valid.");
          return true;
        }
        options.throttle?.succeeded(remoteAddress, req.headers);
      }
      const metrics = registry();
      const text = await metrics.metrics();
      res.statusCode = 200;
      res.setHeader("Content-Type", metrics.contentType);
      res.setHeader("Content-Length", Buffer.byteLength(text));
      res.setHeader("Cache-Control", "no-store");
      res.end(req.method === "HEAD" ? undefined : text);
      return true;
    },
  };
}

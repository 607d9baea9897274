/** @module The plugin's metrics inside OpenClaw: Prometheus text on a route under OpenClaw's gateway auth, beside the inspector. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MetricsRegistry, RouteHandler } from "../index.js";
import { PLUGIN_ID } from "./gateway-config.js";

/** Under the plugin's own prefix, like the inspector: never over or under the intake's path, which has no auth. */
export const METRICS_PATH = `/plugins/${PLUGIN_ID}/metrics`;

function sendJson(res: ServerResponse, status: number, code: string, error: string): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify({ ok: false, error, code }));
}

/**
 * OpenClaw has checked the caller (its gateway token) before this runs. Only the plugin's `hooks_*` registry is
 * served: OpenClaw's process is OpenClaw's to describe. A plugin without one (hooks disabled) serves an empty text.
 */
export function createMetricsHandler(registry: () => MetricsRegistry | undefined): RouteHandler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const pathname = (req.url ?? "/").split("?")[0];
    if (pathname !== METRICS_PATH) {
      sendJson(res, 404, "NOT_FOUND", "Nothing is served at this path.");
      return true;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      sendJson(res, 405, "METHOD_NOT_ALLOWED", "Metrics are read with GET.");
      return true;
    }
    const metrics = registry();
    const text = metrics ? await metrics.metrics() : "";
    res.writeHead(200, {
      "Content-Type": metrics?.contentType ?? "text/plain; version=0.0.4; charset=utf-8",
      "Content-Length": Buffer.byteLength(text),
      "Cache-Control": "no-store",
    });
    res.end(req.method === "HEAD" ? undefined : text);
    return true;
  };
}

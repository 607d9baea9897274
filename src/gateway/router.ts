/** @module The gateway's router: prefix routes registered through the host contract, longest prefix first. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpRoute } from "../index.js";
import type { GatewayLogger } from "./logger.js";

export interface Router {
  add(route: HttpRoute): void;
  readonly routes: readonly HttpRoute[];
  handle(req: IncomingMessage, res: ServerResponse): void;
}

function normalizePrefix(path: string): string {
  const withSlash = path.startsWith("/") ? path : `/${path}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, "") : withSlash;
}

/** An error answer of the gateway's own, shaped like the plugin's: `{ ok: false, error, code }`. */
export function sendGatewayError(res: ServerResponse, status: number, code: string, error: string): void {
  const body = JSON.stringify({ ok: false, error, code });
  res.statusCode = status;
  // A route may already have set its own id before failing; every answer carries one.
  if (!res.hasHeader("X-Request-Id")) res.setHeader("X-Request-Id", randomUUID());
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

export function createRouter(logger: GatewayLogger): Router {
  const routes: HttpRoute[] = [];

  const find = (pathname: string): HttpRoute | undefined =>
    routes.find(
      (route) => route.path === "/" || pathname === route.path || pathname.startsWith(`${route.path}/`),
    );

  return {
    routes,
    add(route) {
      const path = normalizePrefix(route.path);
      if (routes.some((existing) => existing.path === path))
        throw new Error(`a route is already registered at ${path}`);
      routes.push({ ...route, path });
      // Longest prefix first, so a nested route wins over the one that contains it.
      routes.sort((a, b) => b.path.length - a.path.length);
    },
    handle(req, res) {
      const started = performance.now();
      const url = req.url ?? "/";
      const queryStart = url.indexOf("?");
      // The query may hold a (deprecated) token: only the path is ever looked at or logged here.
      const pathname = queryStart === -1 ? url : url.slice(0, queryStart);
      const route = find(pathname);
      if (!route) {
        sendGatewayError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
        logger.info("unrouted request", {
          method: req.method ?? "",
          path: pathname.slice(0, 200),
          status: 404,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        });
        return;
      }
      // The handler answers the request itself; a rejection is the safety net, answered without detail.
      let outcome: Promise<boolean>;
      try {
        outcome = route.handler(req, res);
      } catch (error) {
        outcome = Promise.reject(error);
      }
      outcome.then(undefined, (error: unknown) => {
        logger.error(`route ${route.path} failed: ${(error as Error)?.message ?? String(error)}`);
        if (!res.headersSent) sendGatewayError(res, 500, "INTERNAL", "The request could not be processed.");
        else res.destroy();
      });
    },
  };
}

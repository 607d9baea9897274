/** @module Authenticates a hook request: finds the token, compares it in constant time, throttles failures. */
import * as crypto from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { HostLogger } from "../host/contract.js";
import type { AuthFailureLimiter } from "./auth-failures.js";
import { HookError } from "./errors.js";

export interface AuthResult {
  /** The token came from `?token=` (deprecated). */
  viaQuery: boolean;
}

const QUERY_WARNING_INTERVAL_MS = 60_000;

// The one-shot `crypto.hash` (Node 20.12+) skips building a Hash object per request.
const digest: (value: string) => Buffer =
  typeof crypto.hash === "function"
    ? (value) => crypto.hash("sha256", value, "buffer")
    : (value) => crypto.createHash("sha256").update(value).digest();

/** Bearer first, then X-Service-Token, then the query; the first one present is the one judged. */
export function findToken(
  req: IncomingMessage,
  query: URLSearchParams | undefined,
): { token?: string; viaQuery: boolean } {
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const match = /^bearer[ \t]+(.+)$/i.exec(authorization.trim());
    if (match) return { token: match[1]!.trim(), viaQuery: false };
  }
  const service = req.headers["x-service-token"];
  if (typeof service === "string" && service !== "") return { token: service.trim(), viaQuery: false };
  const fromQuery = query?.get("token");
  if (fromQuery) return { token: fromQuery, viaQuery: true };
  return { viaQuery: false };
}

export function createAuthenticator(options: {
  token: string;
  limiter: AuthFailureLimiter;
  clientAddress: (req: IncomingMessage) => string;
  logger: HostLogger;
  now?: () => number;
}): (req: IncomingMessage, query: URLSearchParams | undefined, requestId: string) => AuthResult {
  // Hashing both sides gives equal-length buffers, so the comparison time depends on neither length.
  const expected = digest(options.token);
  const now = options.now ?? Date.now;
  let lastQueryWarning = Number.NEGATIVE_INFINITY;

  return (req, query, requestId) => {
    const found = findToken(req, query);
    const address = options.clientAddress(req);
    if (found.token !== undefined && crypto.timingSafeEqual(digest(found.token), expected)) {
      options.limiter.reset(address);
      if (found.viaQuery && now() - lastQueryWarning >= QUERY_WARNING_INTERVAL_MS) {
        lastQueryWarning = now();
        options.logger.warn(
          "a hook request sent its token in the query string (?token=), which is deprecated: send it as Authorization: Bearer",
          { requestId },
        );
      }
      return { viaQuery: found.viaQuery };
    }
    const verdict = options.limiter.recordFailure(address);
    if (verdict.throttled) {
      throw new HookError(
        "AUTH_THROTTLED",
        "Too many failed authentications from this address; retry later.",
        {
          headers: { "Retry-After": String(verdict.retryAfterSeconds) },
        },
      );
    }
    throw new HookError(
      "UNAUTHORIZED",
      found.token === undefined ? "A hook token is required." : "The hook token is not valid.",
      { headers: { "WWW-Authenticate": 'Bearer realm="hooks"' } },
    );
  };
}

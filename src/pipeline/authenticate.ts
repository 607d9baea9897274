/** @module Stages 3 and 4: the hook's verifier judges the request's credentials; failures are counted per client address. */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { HookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { Store } from "../store/store.js";
import type { Verifiers } from "../verify/verifier.js";
import type { ClientAddressResolver } from "./client-address.js";

export interface AuthenticateDeps {
  verifiers: Verifiers;
  store: Store;
  clientAddress: ClientAddressResolver;
  logger: HostLogger;
  clock: Clock;
  /** Failed attempts per address within the window before 429. */
  limit: number;
  windowMs: number;
}

export interface AuthenticateInput {
  hook: string;
  headers: IncomingHttpHeaders;
  query: URLSearchParams | undefined;
  remoteAddress: string | undefined;
  requestId: string;
}

/** What the rest of the pipeline needs to know about a request that got in. */
export interface Authenticated {
  /** The token came from `?token=` (deprecated): the response says so. */
  viaQuery: boolean;
}

export type Authenticator = (input: AuthenticateInput) => Promise<Authenticated>;

const QUERY_WARNING_INTERVAL_MS = 60_000;

export function createAuthenticator(deps: AuthenticateDeps): Authenticator {
  let lastQueryWarning = Number.NEGATIVE_INFINITY;

  const warnAboutQueryToken = (requestId: string) => {
    const now = deps.clock.now();
    if (now - lastQueryWarning < QUERY_WARNING_INTERVAL_MS) return;
    lastQueryWarning = now;
    deps.logger.warn(
      "a hook request sent its token in the query string (?token=), which is deprecated: send it as Authorization: Bearer",
      { requestId },
    );
  };

  return async (input) => {
    const address = deps.clientAddress(input.remoteAddress, input.headers);
    const key = `auth-failures:${address}`;
    const verdict = await deps.verifiers.forHook(input.hook).verify(input);
    if (verdict.ok) {
      // A correct credential is always accepted and clears the address's failures.
      await deps.store.reset(key);
      if (verdict.viaQuery) warnAboutQueryToken(input.requestId);
      return { viaQuery: verdict.viaQuery };
    }
    const window = await deps.store.increment(key, deps.windowMs);
    if (window.count > deps.limit) {
      const retryAfter = Math.max(1, Math.ceil((window.resetAt - deps.clock.now()) / 1000));
      throw new HookError(
        "AUTH_THROTTLED",
        "Too many failed authentications from this address; retry later.",
        {
          headers: { "Retry-After": String(retryAfter) },
        },
      );
    }
    throw new HookError("UNAUTHORIZED", verdict.message, {
      headers: { "WWW-Authenticate": 'Bearer realm="hooks"' },
    });
  };
}

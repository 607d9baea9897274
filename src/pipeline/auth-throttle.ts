/** @module Failed authentications counted per client address in the store, for the hook token and for a host's own credentials (the gateway's metrics token): past the limit, 429 with `Retry-After`. */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { type HookMetrics, NO_METRICS } from "../metrics/metrics.js";
import type { CounterWindow, Store } from "../store/store.js";
import type { ClientAddressResolver } from "./client-address.js";

/** One credential's failures, keyed by the client address (see `ClientAddressResolver`) the caller resolved once. */
export interface FailureCounter {
  /** Counts one failure; resolves with the seconds to wait (`Retry-After`) once past the limit, else undefined. */
  failed(client: string, requestId?: string): Promise<number | undefined>;
  /** The seconds to wait when the client is already past the limit, else undefined; counts nothing. */
  throttled(client: string, requestId?: string): Promise<number | undefined>;
  /** Clears the client's failures; nothing waits for that. */
  succeeded(client: string, requestId?: string): void;
}

export interface FailureCounterDeps {
  store: Store;
  clock: Clock;
  logger: HostLogger;
  /** Failed attempts per address within the window before 429 (`hooks.authFailures`). */
  limit: number;
  windowMs: number;
  /**
   * Names a host's own credential: its failures are counted apart from the hook token's, under
   * `<scope>-auth-failures:`. Absent for the hook token, whose keys are `auth-failures:<address>`.
   */
  scope?: string | undefined;
  /** Counts the store's failures in `hooks_store_failures_total`: given for the hook token's counter only. */
  metrics?: Pick<HookMetrics, "storeFailure"> | undefined;
}

const STORE_WARNING_INTERVAL_MS = 60_000;

/** Calls `warn` at most once per interval (by the clock given); the calls in between are dropped. */
export function everyInterval(
  clock: Clock,
  intervalMs: number,
  warn: (requestId: string | undefined) => void,
): (requestId: string | undefined) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (requestId) => {
    const now = clock.now();
    if (now - last < intervalMs) return;
    last = now;
    warn(requestId);
  };
}

export function createFailureCounter(deps: FailureCounterDeps): FailureCounter {
  const { store, clock, limit, windowMs } = deps;
  const metrics = deps.metrics ?? NO_METRICS;
  const prefix = deps.scope === undefined ? "auth-failures:" : `${deps.scope}-auth-failures:`;
  const what = deps.scope === undefined ? "auth failures" : `${deps.scope} auth failures`;
  // Counting fails open: a store that cannot count must never lock out the operator, whose requests would be
  // refused with the attacker's. Duplicate checks fail the other way (see duplicates.ts).
  let problem = "";
  const warnAboutStore = everyInterval(clock, STORE_WARNING_INTERVAL_MS, (requestId) =>
    deps.logger.warn(
      `${what} cannot be counted right now (${problem}): failed requests get 401, none 429, until the store answers again`,
      requestId === undefined ? undefined : { requestId },
    ),
  );
  const storeFailed =
    (operation: "count" | "reset", requestId: string | undefined) =>
    (error: unknown): undefined => {
      metrics.storeFailure(operation);
      problem = errorMessage(error);
      warnAboutStore(requestId);
      return undefined;
    };
  const retryAfter = (window: CounterWindow | undefined): number | undefined =>
    window === undefined || window.count <= limit
      ? undefined
      : Math.max(1, Math.ceil((window.resetAt - clock.now()) / 1000));
  return {
    async failed(client, requestId) {
      return retryAfter(
        await store.increment(prefix + client, windowMs).catch(storeFailed("count", requestId)),
      );
    },
    async throttled(client, requestId) {
      return retryAfter(await store.peek(prefix + client).catch(storeFailed("count", requestId)));
    },
    succeeded(client, requestId) {
      store.reset(prefix + client).catch(storeFailed("reset", requestId));
    },
  };
}

/** A host's own credential's failures, counted per client address as the hook token's are (`plugin.authThrottle`). */
export interface AuthThrottle {
  /**
   * Counts one failed attempt from the request's client. Resolves with the seconds it must wait (`Retry-After`)
   * once it is past the limit, else undefined: answer 401.
   */
  failed(remoteAddress: string | undefined, headers: IncomingHttpHeaders): Promise<number | undefined>;
  /** A correct credential clears its client's failures; nothing waits for that. */
  succeeded(remoteAddress: string | undefined, headers: IncomingHttpHeaders): void;
}

/** The host-facing throttle of `scope`: resolves the request's client address, then counts on a `FailureCounter`. */
export function createAuthThrottle(
  deps: FailureCounterDeps & { scope: string; clientAddress: ClientAddressResolver },
): AuthThrottle {
  const failures = createFailureCounter(deps);
  return {
    failed: (remoteAddress, headers) => failures.failed(deps.clientAddress(remoteAddress, headers)),
    succeeded: (remoteAddress, headers) => failures.succeeded(deps.clientAddress(remoteAddress, headers)),
  };
}

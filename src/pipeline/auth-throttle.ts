/** @module Failed attempts at a host's own credential (the gateway's metrics token) counted per client address in the store, as the hook token's are: past the limit, the caller answers 429. */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { Store } from "../store/store.js";
import type { ClientAddressResolver } from "./client-address.js";

export interface AuthThrottle {
  /**
   * Counts one failed attempt from the request's client. Resolves with the seconds it must wait (`Retry-After`)
   * once it is past the limit, else undefined: answer 401.
   */
  failed(remoteAddress: string | undefined, headers: IncomingHttpHeaders): Promise<number | undefined>;
  /** A correct credential is always accepted and clears its client's failures; nothing waits for that. */
  succeeded(remoteAddress: string | undefined, headers: IncomingHttpHeaders): void;
}

export interface AuthThrottleDeps {
  store: Store;
  clientAddress: ClientAddressResolver;
  clock: Clock;
  logger: HostLogger;
  /** Failed attempts per address within the window before 429 (`hooks.authFailures`). */
  limit: number;
  windowMs: number;
  /** Names the credential in the store's keys: its failures are counted apart from the hook token's. */
  scope: string;
}

const STORE_WARNING_INTERVAL_MS = 60_000;

export function createAuthThrottle(deps: AuthThrottleDeps): AuthThrottle {
  const keyOf = (remoteAddress: string | undefined, headers: IncomingHttpHeaders) =>
    `${deps.scope}-auth-failures:${deps.clientAddress(remoteAddress, headers)}`;
  // Counting fails open, as for the hook token: a store that cannot count must not lock the operator out.
  let lastWarning = Number.NEGATIVE_INFINITY;
  const storeFailed = (error: unknown): undefined => {
    const now = deps.clock.now();
    if (now - lastWarning >= STORE_WARNING_INTERVAL_MS) {
      lastWarning = now;
      deps.logger.warn(
        `failed ${deps.scope} authentications cannot be counted right now (${errorMessage(error)}): they get 401, none 429, until the store answers again`,
      );
    }
    return undefined;
  };
  return {
    async failed(remoteAddress, headers) {
      const window = await deps.store
        .increment(keyOf(remoteAddress, headers), deps.windowMs)
        .catch(storeFailed);
      if (window === undefined || window.count <= deps.limit) return undefined;
      return Math.max(1, Math.ceil((window.resetAt - deps.clock.now()) / 1000));
    },
    succeeded(remoteAddress, headers) {
      deps.store.reset(keyOf(remoteAddress, headers)).catch(storeFailed);
    },
  };
}

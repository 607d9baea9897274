/** @module What a verifier's verdict comes to: an identity, or the refusal its sender gets, with failed attempts counted per client address (for the hook token and for a host's own credentials). */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { errorMessage, HookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { type HookMetrics, NO_METRICS } from "../metrics/metrics.js";
import type { CounterWindow, Store } from "../store/store.js";
import { SIGNATURE_REASON } from "../verify/signature-failure.js";
import type { AuthRefusal, CredentialVerdict } from "../verify/verifier.js";
import { everyInterval } from "./every-interval.js";
import type { Identity } from "./stage.js";
import type { ClientAddressResolver } from "./stages/admit.js";

export interface CredentialJudgeDeps {
  store: Store;
  logger: HostLogger;
  clock: Clock;
  /** Failed attempts per address within the window before 429. */
  limit: number;
  windowMs: number;
  /** Counts refusals by reason, and failed signatures by scheme and reason. */
  metrics?: HookMetrics;
}

/** Who is being judged, for the failure count and the log. */
export interface Judged {
  hook: string;
  /** The verifier's name for the log (`token`, `github`). */
  kind: string;
  /** The client address failures are counted against (see `ClientAddressResolver`). */
  client: string;
  requestId: string;
  headers: IncomingHttpHeaders;
}

export interface CredentialJudge {
  /** The identity an accepted verdict gives; a refused one throws the 401, 403 or 429 its sender gets. */
  /** Accepted credentials are judged at once; a refusal counts the failure first (a promise). */
  judge(verdict: CredentialVerdict, who: Judged, via: Identity["via"]): Identity | Promise<Identity>;
  /**
   * Throws the 429 an address over the limit gets, without counting a failure, reading the body or computing a
   * hash: what a signed path checks first. A store that cannot answer lets the request on (counting fails open).
   */
  refuseThrottled(who: Pick<Judged, "client" | "requestId">): Promise<void>;
}

const QUERY_WARNING_INTERVAL_MS = 60_000;

export function createCredentialJudge(deps: CredentialJudgeDeps): CredentialJudge {
  const metrics = deps.metrics ?? NO_METRICS;
  const failures = createFailureCounter({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    limit: deps.limit,
    windowMs: deps.windowMs,
    metrics,
  });
  const warnAboutQueryToken = everyInterval(deps.clock, QUERY_WARNING_INTERVAL_MS, (requestId) =>
    deps.logger.warn(
      "a hook request sent its token in the query string (?token=), which is deprecated: send it as Authorization: Bearer",
      { requestId },
    ),
  );
  const throttledError = (retryAfter: number) =>
    new HookError("AUTH_THROTTLED", "Too many failed authentications from this address; retry later.", {
      headers: { "Retry-After": String(retryAfter) },
    });

  const refused = async (verdict: AuthRefusal, who: Judged, via: Identity["via"]): Promise<never> => {
    // Why a signature or a handshake was refused helps the operator fix a secret; the sender only learns that it was.
    if (via !== "token" || verdict.forbidden) {
      deps.logger.warn(`hook "${who.hook}": ${who.kind} verification failed: ${verdict.reason}`, {
        requestId: who.requestId,
        hook: who.hook,
      });
    }
    if (verdict.signature !== undefined) metrics.signatureFailure(who.kind, verdict.signature);
    const retryAfter = await failures.failed(who.client, who.requestId);
    // One reason per refused request: a throttled one is counted as throttled, whatever its credential was.
    metrics.authFailure(retryAfter === undefined ? (verdict.credential ?? "invalid") : "throttled");
    if (retryAfter !== undefined) throw throttledError(retryAfter);
    if (verdict.forbidden) throw new HookError("HANDSHAKE_REFUSED", verdict.message);
    throw new HookError("UNAUTHORIZED", verdict.message, {
      reason: reasonOf(verdict),
      ...(verdict.challenge !== undefined && { headers: { "WWW-Authenticate": verdict.challenge } }),
    });
  };

  return {
    judge(verdict, who, via) {
      if (!verdict.ok) return refused(verdict, who, via);
      // Accepted credentials clear the address's failures; the answer does not wait for that.
      if (verdict.weak !== true) failures.succeeded(who.client, who.requestId);
      if (verdict.viaQuery) warnAboutQueryToken(who.requestId);
      return { via: verdict.weak ? "handshake" : via, viaQuery: verdict.viaQuery };
    },
    async refuseThrottled(who) {
      const retryAfter = await failures.throttled(who.client, who.requestId);
      if (retryAfter === undefined) return;
      metrics.authFailure("throttled");
      throw throttledError(retryAfter);
    },
  };
}

/** The journal's reason for a refused credential: which signature check failed, or whether a token was there. */
function reasonOf(verdict: AuthRefusal): string {
  if (verdict.signature !== undefined) return SIGNATURE_REASON[verdict.signature];
  return verdict.credential === "missing" ? "TOKEN_MISSING" : "TOKEN_WRONG";
}

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

export function createFailureCounter(deps: FailureCounterDeps): FailureCounter {
  const { store, clock, limit, windowMs } = deps;
  const metrics = deps.metrics ?? NO_METRICS;
  const prefix = deps.scope === undefined ? "auth-failures:" : `${deps.scope}-auth-failures:`;
  const what = deps.scope === undefined ? "auth failures" : `${deps.scope} auth failures`;
  // Counted as the limit a bounded store must not drop: a throttled address kept throttled however many strangers come.
  const rule = { limit };
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
        await store.increment(prefix + client, windowMs, rule).catch(storeFailed("count", requestId)),
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

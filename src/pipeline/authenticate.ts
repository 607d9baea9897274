/** @module Stages 3 and 4: the hook's verifier judges the request's credentials (its token, or its signature on the body's bytes); failures are counted per client address. */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { HookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { type HookMetrics, NO_METRICS } from "../metrics/metrics.js";
import type { Store } from "../store/store.js";
import { SIGNATURE_REASON } from "../verify/signature-failure.js";
import type { AuthVerdict, Verifier } from "../verify/verifier.js";
import { createFailureCounter, everyInterval } from "./auth-throttle.js";

export interface AuthenticateDeps {
  store: Store;
  logger: HostLogger;
  clock: Clock;
  /** Failed attempts per address within the window before 429. */
  limit: number;
  windowMs: number;
  /** Counts refusals by reason, and failed signatures by scheme and reason. */
  metrics?: HookMetrics;
}

export interface AuthenticateInput {
  /** The hook's verifier; one that needs the body gets `rawBody`. */
  verifier: Verifier;
  hook: string;
  headers: IncomingHttpHeaders;
  query: URLSearchParams | undefined;
  /** The client address failures are counted against, resolved once per request (see `ClientAddressResolver`). */
  client: string;
  requestId: string;
  /** The exact bytes received, for verifiers that check a signature. */
  rawBody?: Buffer;
  /** The query string as received, without the `?`. */
  rawQuery?: string;
}

/** What the rest of the pipeline needs to know about a request that got in. */
export interface Authenticated {
  /** The token came from `?token=` (deprecated): the response says so. */
  viaQuery: boolean;
}

/** Judges a request's credentials; `acceptToken` and `refuseThrottled` are the checks that may run before its body is read. */
export interface Authenticator {
  (input: AuthenticateInput): Promise<Authenticated>;
  /**
   * On a signed path that also takes the hook token (a verifier with `checkToken`): accepts a request carrying the
   * correct one before its body is read, as any token path does, whatever failures its address has. Undefined when
   * it carries none, or a wrong one: nothing is counted then, its signature (or its failure, once the body is read)
   * decides.
   */
  acceptToken(input: AuthenticateInput): Promise<Authenticated | undefined>;
  /**
   * Throws the 429 an address over the limit gets, without counting a failure, reading the body or computing a
   * hash: what a signed path checks first. A store that cannot answer lets the request on (counting fails open).
   */
  refuseThrottled(input: ThrottleInput): Promise<void>;
}

export type ThrottleInput = Pick<AuthenticateInput, "client" | "requestId">;

const QUERY_WARNING_INTERVAL_MS = 60_000;

export function createAuthenticator(deps: AuthenticateDeps): Authenticator {
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

  const refuseThrottled = async (input: ThrottleInput) => {
    const retryAfter = await failures.throttled(input.client, input.requestId);
    if (retryAfter === undefined) return;
    metrics.authFailure("throttled");
    throw throttledError(retryAfter);
  };

  const accepted = (input: AuthenticateInput, viaQuery: boolean): Authenticated => {
    // Accepted credentials clear the address's failures; the answer does not wait for that.
    if (input.verifier.weak !== true) failures.succeeded(input.client, input.requestId);
    if (viaQuery) warnAboutQueryToken(input.requestId);
    return { viaQuery };
  };

  const acceptToken = async (input: AuthenticateInput): Promise<Authenticated | undefined> => {
    const verdict = await input.verifier.checkToken?.(input);
    return verdict?.ok ? accepted(input, verdict.viaQuery) : undefined;
  };

  const authenticate = async (input: AuthenticateInput): Promise<Authenticated> => {
    const verdict = await input.verifier.verify({ ...input, now: deps.clock.now() });
    if (verdict.ok) return accepted(input, verdict.viaQuery);
    // Why a signature or a handshake was refused helps the operator fix a secret; the sender only learns that it was.
    if (input.verifier.needsBody || verdict.forbidden) {
      deps.logger.warn(
        `hook "${input.hook}": ${input.verifier.kind} verification failed: ${verdict.reason}`,
        {
          requestId: input.requestId,
          hook: input.hook,
        },
      );
    }
    if (verdict.signature !== undefined) metrics.signatureFailure(input.verifier.kind, verdict.signature);
    const retryAfter = await failures.failed(input.client, input.requestId);
    // One reason per refused request: a throttled one is counted as throttled, whatever its credential was.
    metrics.authFailure(retryAfter === undefined ? (verdict.credential ?? "invalid") : "throttled");
    if (retryAfter !== undefined) throw throttledError(retryAfter);
    if (verdict.forbidden) throw new HookError("HANDSHAKE_REFUSED", verdict.message);
    // The challenge names the one scheme HTTP has a word for; a path that takes only signatures offers none.
    throw new HookError("UNAUTHORIZED", verdict.message, {
      reason: reasonOf(verdict),
      ...(input.verifier.acceptsToken && { headers: { "WWW-Authenticate": 'Bearer realm="hooks"' } }),
    });
  };
  return Object.assign(authenticate, { acceptToken, refuseThrottled });
}

/** The journal's reason for a refused credential: which signature check failed, or whether a token was there. */
function reasonOf(verdict: Extract<AuthVerdict, { ok: false }>): string {
  if (verdict.signature !== undefined) return SIGNATURE_REASON[verdict.signature];
  return verdict.credential === "missing" ? "TOKEN_MISSING" : "TOKEN_WRONG";
}

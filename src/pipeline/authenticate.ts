/** @module Stages 3 and 4: the hook's verifier judges the request's credentials (its token, or its signature on the body's bytes); failures are counted per client address. */
import type { IncomingHttpHeaders } from "node:http";
import type { Clock } from "../clock.js";
import { errorMessage, HookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { type HookMetrics, NO_METRICS } from "../metrics/metrics.js";
import type { Store } from "../store/store.js";
import { findToken } from "../verify/token.js";
import type { Verifier } from "../verify/verifier.js";
import type { ClientAddressResolver } from "./client-address.js";

export interface AuthenticateDeps {
  store: Store;
  clientAddress: ClientAddressResolver;
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
  remoteAddress: string | undefined;
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
   * On a signed path that also takes the hook token: accepts a request carrying the correct one before its body
   * is read, as any token path does, whatever failures its address has. Undefined when it carries none, or a
   * wrong one: nothing is counted then, its signature (or its failure, once the body is read) decides.
   */
  acceptToken(input: AuthenticateInput): Promise<Authenticated | undefined>;
  /**
   * Throws the 429 an address over the limit gets, without counting a failure, reading the body or computing a
   * hash: what a signed path checks first. A store that cannot answer lets the request on (counting fails open).
   */
  refuseThrottled(input: ThrottleInput): Promise<void>;
}

export type ThrottleInput = Pick<AuthenticateInput, "headers" | "remoteAddress" | "requestId">;

const QUERY_WARNING_INTERVAL_MS = 60_000;
const STORE_WARNING_INTERVAL_MS = 60_000;

/** Calls `warn` at most once per interval (by the clock given); the calls in between are dropped. */
function everyInterval(clock: Clock, intervalMs: number, warn: (requestId: string) => void) {
  let last = Number.NEGATIVE_INFINITY;
  return (requestId: string) => {
    const now = clock.now();
    if (now - last < intervalMs) return;
    last = now;
    warn(requestId);
  };
}

export function createAuthenticator(deps: AuthenticateDeps): Authenticator {
  const metrics = deps.metrics ?? NO_METRICS;
  const warnAboutQueryToken = everyInterval(deps.clock, QUERY_WARNING_INTERVAL_MS, (requestId) =>
    deps.logger.warn(
      "a hook request sent its token in the query string (?token=), which is deprecated: send it as Authorization: Bearer",
      { requestId },
    ),
  );
  // Counting fails open: a store that cannot count must never lock out the operator, whose requests would be
  // refused with the attacker's. Duplicate checks fail the other way (see duplicates.ts).
  let storeProblem = "";
  const warnAboutStore = everyInterval(deps.clock, STORE_WARNING_INTERVAL_MS, (requestId) =>
    deps.logger.warn(
      `auth failures cannot be counted right now (${storeProblem}): failed requests get 401, none 429, until the store answers again`,
      { requestId },
    ),
  );
  const storeFailed = (operation: "count" | "reset", requestId: string) => (error: unknown) => {
    metrics.storeFailure(operation);
    storeProblem = errorMessage(error);
    warnAboutStore(requestId);
  };

  const throttledError = (resetAt: number) => {
    const retryAfter = Math.max(1, Math.ceil((resetAt - deps.clock.now()) / 1000));
    return new HookError(
      "AUTH_THROTTLED",
      "Too many failed authentications from this address; retry later.",
      {
        headers: { "Retry-After": String(retryAfter) },
      },
    );
  };
  const keyOf = (input: ThrottleInput) =>
    `auth-failures:${deps.clientAddress(input.remoteAddress, input.headers)}`;

  const refuseThrottled = async (input: ThrottleInput) => {
    const window = await deps.store.peek(keyOf(input)).catch(storeFailed("count", input.requestId));
    if (window === undefined || window.count <= deps.limit) return;
    metrics.authFailure("throttled");
    throw throttledError(window.resetAt);
  };

  const accepted = (input: AuthenticateInput, viaQuery: boolean): Authenticated => {
    // A correct credential is always accepted and clears the address's failures; its answer does not wait for that.
    deps.store.reset(keyOf(input)).catch(storeFailed("reset", input.requestId));
    if (viaQuery) warnAboutQueryToken(input.requestId);
    return { viaQuery };
  };

  const acceptToken = async (input: AuthenticateInput): Promise<Authenticated | undefined> => {
    if (!input.verifier.acceptsToken) return undefined;
    const { headers, query } = input;
    if (findToken({ headers, query }).token === undefined) return undefined;
    // Shown only the token's carriers, the verifier judges the token alone: no signature, no body.
    const carriers = { authorization: headers.authorization, "x-service-token": headers["x-service-token"] };
    const verdict = await input.verifier.verify({ headers: carriers, query, now: deps.clock.now() });
    return verdict.ok ? accepted(input, verdict.viaQuery) : undefined;
  };

  const authenticate = async (input: AuthenticateInput): Promise<Authenticated> => {
    const key = keyOf(input);
    const verdict = await input.verifier.verify({ ...input, now: deps.clock.now() });
    if (verdict.ok) return accepted(input, verdict.viaQuery);
    // Why a signature was refused helps the operator fix a secret; the sender only learns that it was.
    if (input.verifier.needsBody) {
      deps.logger.warn(
        `hook "${input.hook}": ${input.verifier.kind} verification failed: ${verdict.reason}`,
        {
          requestId: input.requestId,
          hook: input.hook,
        },
      );
    }
    if (verdict.signature !== undefined) metrics.signatureFailure(input.verifier.kind, verdict.signature);
    const window = await deps.store
      .increment(key, deps.windowMs)
      .catch(storeFailed("count", input.requestId));
    const throttled = window !== undefined && window.count > deps.limit;
    // One reason per refused request: a throttled one is counted as throttled, whatever its credential was.
    metrics.authFailure(throttled ? "throttled" : (verdict.credential ?? "invalid"));
    if (throttled) throw throttledError(window.resetAt);
    // The challenge names the one scheme HTTP has a word for; a path that takes only signatures offers none.
    throw new HookError(
      "UNAUTHORIZED",
      verdict.message,
      input.verifier.acceptsToken ? { headers: { "WWW-Authenticate": 'Bearer realm="hooks"' } } : {},
    );
  };
  return Object.assign(authenticate, { acceptToken, refuseThrottled });
}

/** @module Per-hook rate limits: authenticated requests counted in the store in fixed windows, per hook or per hook and client address; past the limit, 429 `RATE_LIMITED` with `Retry-After`. */
import type { Clock } from "../clock.js";
import type { RateLimit } from "../config/limits-schema.js";
import { errorMessage, HookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { HookMetrics } from "../metrics/metrics.js";
import type { Store } from "../store/store.js";
import { everyInterval } from "./every-interval.js";

/** Whose budget a request is counted in. */
export interface RateLimited {
  /** The limit in force; undefined: none, nothing is counted. */
  rule: RateLimit | undefined;
  /** `wake`, `agent`, or the mapping's id: what the budget belongs to. */
  owner: { kind: "wake" | "agent" } | { kind: "mapping"; mappingId: string };
  /** The hook name the request came to (the metric's label). */
  hook: string;
  /** The request's client address (see `ClientAddressResolver`), counted apart with `per: "client"`. */
  client: string;
  requestId: string;
}

/** Counts the request in its budget, or throws the 429 a request past it gets. A store that cannot count lets it on. */
export type RateLimiter = (request: RateLimited) => Promise<void>;

export interface RateLimiterDeps {
  store: Store;
  clock: Clock;
  logger: HostLogger;
  metrics: Pick<HookMetrics, "rateLimited" | "storeFailure">;
}

const STORE_WARNING_INTERVAL_MS = 60_000;

/**
 * The key of a budget: `rate:` with the owner, the window's length, and the client, or `*` for the hook's one budget.
 * A mapping's id is the operator's text, encoded so that no id can spell another owner's key; a client address is
 * bounded already. The window is part of the key because a counter keeps the expiry it was made with: a reload to a
 * shorter window, or a gateway with another, starts a counter of its own instead of waiting out the old one's. The
 * number of requests is not: a lower or higher ceiling over the same window applies to what that window counted so
 * far, so a reload cannot hand a sender a fresh budget mid-window.
 */
export function rateKey(request: Pick<RateLimited, "owner" | "client">, rule: RateLimit): string {
  const owner =
    request.owner.kind === "mapping"
      ? `m:${encodeURIComponent(request.owner.mappingId)}`
      : request.owner.kind;
  return `rate:${owner}:${rule.perSeconds}s:${rule.per === "hook" ? "*" : request.client}`;
}

/** What the sender is told: which limit, in the config's own numbers, and nothing about anyone else's budget. */
function rateLimitedMessage(rule: RateLimit, retryAfter: number): string {
  const requests = rule.requests === 1 ? "1 request" : `${rule.requests} requests`;
  const from = rule.per === "client" ? " from one address" : "";
  return `This hook accepts at most ${requests} per ${rule.perSeconds} s${from}; retry in ${retryAfter} s.`;
}

export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const { store, clock, metrics } = deps;
  // Counting fails open, as failed authentications do: the limit is the operator's guard against load, and a store
  // outage must not turn it into refusing every sender.
  let problem = "";
  const warnAboutStore = everyInterval(clock, STORE_WARNING_INTERVAL_MS, (requestId) =>
    deps.logger.warn(
      `rate limits cannot be counted right now (${problem}): requests are let through unlimited until the store answers again`,
      requestId === undefined ? undefined : { requestId },
    ),
  );
  return async (request) => {
    const { rule } = request;
    if (rule === undefined) return;
    let window: Awaited<ReturnType<Store["increment"]>>;
    try {
      window = await store.increment(rateKey(request, rule), rule.perSeconds * 1000, {
        limit: rule.requests,
        // A hook's one budget is not a client's: a flood of clients' counters must not push it out of the store.
        shared: rule.per === "hook",
      });
    } catch (error) {
      metrics.storeFailure("rate");
      problem = errorMessage(error);
      warnAboutStore(request.requestId);
      return;
    }
    if (window.count <= rule.requests) return;
    const retryAfter = Math.max(1, Math.ceil((window.resetAt - clock.now()) / 1000));
    metrics.rateLimited?.(
      request.hook,
      request.owner.kind === "mapping" ? request.owner.mappingId : undefined,
    );
    throw new HookError("RATE_LIMITED", rateLimitedMessage(rule, retryAfter), {
      headers: { "Retry-After": String(retryAfter) },
    });
  };
}

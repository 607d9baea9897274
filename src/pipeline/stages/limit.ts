/** @module The rate-limit stage of `/wake` and `/agent`: authenticated requests counted against their hook's limit, once each, never a duplicate. */
import type { RateLimit } from "../../config/limits-schema.js";
import type { RateLimiter } from "../rate-limit.js";
import { need, type RequestContext, type Stage } from "../stage.js";
import { mayCarryDeliveryId } from "./dedupe.js";

export interface LimitStageDeps {
  rateLimiter: RateLimiter;
  /** The rate limits of `/wake` and `/agent` (their own, else `hooks.limits.default`'s); a mapping counts its own. */
  directRateLimits: Readonly<Record<"wake" | "agent", RateLimit | undefined>>;
}

/**
 * Only authenticated requests are counted (a stranger's flood must not use up a sender's budget), and only once they
 * are known not to be duplicates: a retry of an accepted request gets its first answer, not 429, and spends nothing.
 * So `/wake` and `/agent` are counted right after the duplicate check; a request that cannot carry a delivery id (no
 * Idempotency-Key) has no such check to wait for, and is counted before its body is read (`early`). A mapping counts
 * its own once it owns the request (the resolve stage).
 */
export function createLimitStage(deps: LimitStageDeps, early: boolean): Stage {
  const count = (ctx: RequestContext, kind: "wake" | "agent", rule: RateLimit) =>
    deps.rateLimiter({
      rule,
      owner: { kind },
      hook: ctx.hook,
      client: need(ctx.client, "the client address"),
      requestId: ctx.requestId,
    });
  const counted = async (ctx: RequestContext): Promise<RequestContext> => {
    const route = need(ctx.route, "the route");
    if (route.kind === "mapped" || ctx.counted) return ctx;
    const rule = deps.directRateLimits[route.kind];
    if (rule === undefined) return ctx;
    if (early && mayCarryDeliveryId(ctx.verifier, ctx.request.headers)) return ctx;
    await count(ctx, route.kind, rule);
    return { ...ctx, counted: true };
  };
  // Named for where each stands in the list.
  return early
    ? function limitBeforeBody(ctx) {
        return counted(ctx);
      }
    : function limit(ctx) {
        return counted(ctx);
      };
}

/** @module The limits a hook may have (`hooks.limits.*` and a mapping's own): one declaration, shared by both places. */
import * as v from "valibot";

// Each field's `v.description` is its entry in docs/configuration.md and in the JSON Schemas (`npm run schemas`).

const PositiveInt = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"));

/** The longest window: a day. A longer one is a quota, and a counter that outlives its purpose. */
export const MAX_RATE_WINDOW_SECONDS = 86_400;

/** Who shares one budget: each client address apart, or every sender of the hook together. */
export const RATE_LIMIT_SCOPES = ["client", "hook"] as const;

export const RateLimitSchema = v.strictObject({
  requests: v.pipe(
    PositiveInt,
    v.description("Requests accepted within one window; the next gets 429 `RATE_LIMITED` until it ends."),
  ),
  perSeconds: v.pipe(
    PositiveInt,
    v.maxValue(MAX_RATE_WINDOW_SECONDS, `must be at most ${MAX_RATE_WINDOW_SECONDS} (a day)`),
    v.description(
      "Length of the window, in seconds (at most 86400). Windows are fixed: the first counted request starts one.",
    ),
  ),
  per: v.pipe(
    v.optional(v.picklist(RATE_LIMIT_SCOPES, 'must be "client" or "hook"'), "client"),
    v.description(
      "`client`: each client address has its own budget (the address found as for `hooks.authFailures`, behind `hooks.trustedProxies` the forwarded one); `hook`: one budget for every sender of the hook together.",
    ),
  ),
});

export type RateLimit = v.InferOutput<typeof RateLimitSchema>;

export const HookLimitsSchema = v.strictObject({
  rateLimit: v.pipe(
    v.optional(RateLimitSchema),
    v.description(
      "How many authenticated requests the hook accepts per window; past it, 429 `RATE_LIMITED` with `Retry-After`, counted in `hooks.store` so several gateways share one budget ([Rate limits](http.md#rate-limits)). Unset: no limit of its own (`hooks.limits.default`'s applies). Many senders (GitHub among them) do not retry a 429: what is refused is lost unless the sender retries.",
    ),
  ),
});

export type HookLimits = v.InferOutput<typeof HookLimitsSchema>;

export const HooksLimitsSchema = v.strictObject({
  default: v.pipe(
    v.optional(HookLimitsSchema),
    v.description(
      "Limits of every hook that sets none of its own: each mapping without its own `rateLimit`, `/wake` and `/agent` without theirs below.",
    ),
  ),
  wake: v.pipe(v.optional(HookLimitsSchema), v.description("Limits of `POST <hooks.path>/wake`.")),
  agent: v.pipe(v.optional(HookLimitsSchema), v.description("Limits of `POST <hooks.path>/agent`.")),
});

/** @module The limits a hook may have (`hooks.limits.*` and a mapping's own: a rate, agent turns at a time, the source addresses it takes): one declaration for both places. */
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

const CAP_RULE =
  "that run at once; later ones are accepted (202 with `queued: true`), journaled, and start in order as running ones end ([Turns at a time](http.md#turns-at-a-time)).";

const QUEUE_RULE =
  "Agent turns of one hook accepted to wait for a slot of its `maxConcurrentTurns`; past them, 429 `TURNS_QUEUED_FULL` with `Retry-After`, listed in the journal as a refusal ([Turns at a time](http.md#turns-at-a-time)).";

const RateLimitField = v.pipe(
  v.optional(RateLimitSchema),
  v.description(
    "How many authenticated requests the hook accepts per window; past it, 429 `RATE_LIMITED` with `Retry-After`, counted in `hooks.store` so several gateways share one budget ([Rate limits](http.md#rate-limits)). Unset: no limit of its own (`hooks.limits.default`'s applies). Many senders (GitHub among them) do not retry a 429: what is refused is lost unless the sender retries.",
  ),
);

/**
 * A source allow-list. Its entries are only checked for shape here: whether each is an address, a CIDR range or a
 * known name depends on `hooks.addressRanges`, so that is a semantic check (src/config/allow-from.ts).
 */
const AllowFromList = v.pipe(
  v.array(v.string("must be a string"), "must be a list of addresses, CIDR ranges or range names"),
  v.minLength(1, "must list at least one address or range: remove it to allow any source"),
);

const ALLOW_FROM_RULE =
  "Each entry is an address (`192.0.2.7`, `2001:db8::1`), a CIDR range (`192.0.2.0/24`, `2001:db8::/32`), one of `loopback`, `linklocal`, `uniquelocal`, or a name from the ranges files (`github`; see `hooks.addressRanges`). A request from any other address gets 403 `SOURCE_NOT_ALLOWED` before its credential or body is looked at; the address judged is found as for `hooks.authFailures` (behind `hooks.trustedProxies`, the forwarded one) ([Allowing only some source addresses](http.md#allowing-only-some-source-addresses)).";

const AllowFromField = v.pipe(
  v.optional(AllowFromList),
  v.description(
    `The source addresses the hook accepts requests from; on a name several mappings could own, an address any of them allows gets in. ${ALLOW_FROM_RULE} Unset: \`hooks.limits.default.allowFrom\`, and without that any source; \`[]\` is a config error.`,
  ),
);

/** The limits of one hook that sets its own: a mapping (its fields), or `/agent`. Unset fields take the default's. */
export const HookLimitsSchema = v.strictObject({
  rateLimit: RateLimitField,
  maxConcurrentTurns: v.pipe(
    v.optional(PositiveInt),
    v.description(`This hook's agent turns ${CAP_RULE} Unset: \`hooks.limits.default.maxConcurrentTurns\`.`),
  ),
  maxQueuedTurns: v.pipe(
    v.optional(PositiveInt),
    v.description(`${QUEUE_RULE} Unset: \`hooks.limits.default.maxQueuedTurns\`.`),
  ),
  allowFrom: AllowFromField,
});

export type HookLimits = v.InferOutput<typeof HookLimitsSchema>;

/** `/wake` starts no turns: a rate and its sources are all it can limit. */
const WakeLimitsSchema = v.strictObject({ rateLimit: RateLimitField, allowFrom: AllowFromField });

/**
 * `hooks.limits.default`: the one place the default caps are declared. No rate is limited by default. 1,000 waiting
 * turns is beyond any burst of real senders (a large organisation's pushes, a provider's retry storm are tens to
 * hundreds), and at a few minutes a turn already hours of work: past it a queue is a backlog no one will read. Each
 * waiting turn holds its request in memory (about 13 KB), so the default bounds a hook's queue near 13 MB.
 */
const DefaultLimitsSchema = v.strictObject({
  rateLimit: v.pipe(
    v.optional(RateLimitSchema),
    v.description(
      "The rate limit of every hook without its own ([Rate limits](http.md#rate-limits)). Unset: none. Many senders (GitHub among them) do not retry a 429.",
    ),
  ),
  maxConcurrentTurns: v.pipe(
    v.optional(PositiveInt, 4),
    v.description(
      `The agent turns of one mapping, or of \`/agent\`, ${CAP_RULE} For each that sets none of its own.`,
    ),
  ),
  maxQueuedTurns: v.pipe(
    v.optional(PositiveInt, 1_000),
    v.description(`${QUEUE_RULE} For each mapping, and \`/agent\`, that sets none of its own.`),
  ),
  allowFrom: v.pipe(
    v.optional(AllowFromList),
    v.description(
      `The source addresses of every hook without its own \`allowFrom\`: each mapping, \`/wake\`, \`/agent\`, and names no mapping claims. ${ALLOW_FROM_RULE} Unset: any source; \`[]\` is a config error.`,
    ),
  ),
});

export const HooksLimitsSchema = v.strictObject({
  default: v.pipe(
    v.optional(DefaultLimitsSchema, {}),
    v.description(
      "Limits of every hook that sets none of its own: each mapping without its own, `/wake` and `/agent` without theirs below.",
    ),
  ),
  wake: v.pipe(v.optional(WakeLimitsSchema), v.description("Limits of `POST <hooks.path>/wake`.")),
  agent: v.pipe(v.optional(HookLimitsSchema), v.description("Limits of `POST <hooks.path>/agent`.")),
});

export type HooksLimits = v.InferOutput<typeof HooksLimitsSchema>;

/** Every key `hooks.limits` takes, by config path (for the did-you-mean hints). */
export const LIMITS_KEYS: Readonly<Record<string, readonly string[]>> = {
  "hooks.limits": Object.keys(HooksLimitsSchema.entries),
  "hooks.limits.default": Object.keys(DefaultLimitsSchema.entries),
  "hooks.limits.wake": Object.keys(WakeLimitsSchema.entries),
  "hooks.limits.agent": Object.keys(HookLimitsSchema.entries),
  ...Object.fromEntries(
    Object.keys(HooksLimitsSchema.entries).map((hook) => [
      `hooks.limits.${hook}.rateLimit`,
      Object.keys(RateLimitSchema.entries),
    ]),
  ),
  "hooks.mappings.rateLimit": Object.keys(RateLimitSchema.entries),
};

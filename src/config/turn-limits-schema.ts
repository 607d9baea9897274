/** @module How many agent turns of one mapping (or of `/agent`) run at once: `maxConcurrentTurns`, on a mapping and in `hooks.limits`. */
import * as v from "valibot";

const AtLeastOne = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"));

const CAP_RULE =
  "that run at once; later ones are accepted (202 with `queued: true`), journaled, and start in order as running ones end ([Turns at a time](http.md#turns-at-a-time)).";

/** A mapping's own cap: unset, `hooks.limits.default` applies. */
export const MaxConcurrentTurnsSchema = v.pipe(
  v.optional(AtLeastOne),
  v.description(`This mapping's agent turns ${CAP_RULE} Unset: \`hooks.limits.default.maxConcurrentTurns\`.`),
);

/** `hooks.limits.agent`: `/agent`'s own cap; unset, the default's. */
export const TurnLimitsSchema = v.strictObject({
  maxConcurrentTurns: v.pipe(
    v.optional(AtLeastOne),
    v.description(`\`/agent\`'s turns ${CAP_RULE} Unset: \`hooks.limits.default.maxConcurrentTurns\`.`),
  ),
});

/** `hooks.limits.default`: the one place the default cap (4) is declared. */
export const DefaultTurnLimitsSchema = v.strictObject({
  maxConcurrentTurns: v.pipe(
    v.optional(AtLeastOne, 4),
    v.description(
      `The agent turns of one mapping, or of \`/agent\`, ${CAP_RULE} For each that sets none of its own.`,
    ),
  ),
});

export const TurnLimitsConfigSchema = v.strictObject({
  default: v.pipe(
    v.optional(DefaultTurnLimitsSchema, {}),
    v.description("What applies to every hook that sets nothing of its own."),
  ),
  agent: v.pipe(v.optional(TurnLimitsSchema), v.description("`POST /hooks/agent`'s own limits.")),
});

export type TurnLimitsConfig = v.InferOutput<typeof TurnLimitsConfigSchema>;

/** @module The assistant's inspector tools as OpenClaw knows them before it loads code: their names, and their parameters (valibot, and the JSON Schema the model sees). */
import * as v from "valibot";

/** OpenClaw's manifest declares every tool a plugin registers (`contracts.tools`); the generated manifest takes these. */
export const INSPECTOR_TOOL_NAMES = {
  recent: "hooks_intake_requests",
  detail: "hooks_intake_request",
  dryRun: "hooks_intake_dry_run",
} as const;

/** A list for the model stays short: it pays for every line in its context. */
export const RECENT_DEFAULT_LIMIT = 20;
export const RECENT_MAX_LIMIT = 100;

export const RecentRequestsParamsSchema = v.strictObject({
  status: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'A status class ("2xx", "4xx", "5xx"), an exact status ("401"), or a state ("done", "pending", "refused", "duplicate", "interrupted").',
      ),
    ),
  ),
  hook: v.optional(
    v.pipe(v.string(), v.description('The hook: "wake", "agent" or a mapped path such as "deploy".')),
  ),
  text: v.optional(
    v.pipe(
      v.string(),
      v.description("A substring of the request id, hook, mapping id, reason code or client address."),
    ),
  ),
  limit: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(RECENT_MAX_LIMIT),
      v.description(`How many requests, newest first (default ${RECENT_DEFAULT_LIMIT}).`),
    ),
    RECENT_DEFAULT_LIMIT,
  ),
});

export const RequestIdParamsSchema = v.strictObject({
  id: v.pipe(
    v.string(),
    v.minLength(1),
    v.description("The request's id, as the list of recent requests gives it."),
  ),
});

export type RecentRequestsParams = v.InferOutput<typeof RecentRequestsParamsSchema>;
export type RequestIdParams = v.InferOutput<typeof RequestIdParamsSchema>;

/*
 * The JSON Schemas below are what OpenClaw hands the model. They are written out because the converter is a
 * development dependency, absent from an installed package; a test holds them equal to the converter's output of the
 * valibot schemas above, which are what the tools parse with.
 */

export const RECENT_REQUESTS_PARAMETERS = {
  type: "object",
  properties: {
    status: {
      type: "string",
      description:
        'A status class ("2xx", "4xx", "5xx"), an exact status ("401"), or a state ("done", "pending", "refused", "duplicate", "interrupted").',
    },
    hook: { type: "string", description: 'The hook: "wake", "agent" or a mapped path such as "deploy".' },
    text: {
      type: "string",
      description: "A substring of the request id, hook, mapping id, reason code or client address.",
    },
    limit: {
      type: "integer",
      minimum: 1,
      maximum: RECENT_MAX_LIMIT,
      description: `How many requests, newest first (default ${RECENT_DEFAULT_LIMIT}).`,
      default: RECENT_DEFAULT_LIMIT,
    },
  },
  required: [],
  additionalProperties: false,
} as const;

export const REQUEST_ID_PARAMETERS = {
  type: "object",
  properties: {
    id: {
      type: "string",
      minLength: 1,
      description: "The request's id, as the list of recent requests gives it.",
    },
  },
  required: ["id"],
  additionalProperties: false,
} as const;

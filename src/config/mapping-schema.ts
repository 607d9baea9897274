/** @module The mapping entry of `hooks.mappings`: the one declaration of its shape. */
import * as v from "valibot";
import { HMAC_ALGORITHMS, SIGNATURE_ENCODINGS, SIGNATURE_SCHEMES } from "../verify/signature-scheme.js";
import { WakeModeSchema } from "../vocabulary.js";

/** Largest body a mapping may accept for its own path (32 MiB). */
export const MAX_MAPPING_BODY_BYTES = 33_554_432;

const TemplateText = v.optional(v.string());

/** A mapping's fields that are `{{templates}}`, rendered into text: a message, a session's name or key, a recipient. */
export const TEMPLATE_FIELDS = [
  "name",
  "sessionKey",
  "to",
  "model",
  "thinking",
  "textTemplate",
  "messageTemplate",
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];
const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));
/** A secret's value never appears in a message: valibot's default messages quote what they received. */
const Secret = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"));

/** A matched value: exact, or a list of alternatives. */
const HeaderValues = v.union(
  [NonEmpty, v.pipe(v.array(v.string()), v.minLength(1, "must list a value"))],
  "must be a string or a list of strings",
);
const PayloadValue = v.union([v.string(), v.number(), v.boolean(), v.null()]);
const PayloadValues = v.union(
  [PayloadValue, v.pipe(v.array(PayloadValue), v.minLength(1, "must list a value"))],
  "must be a string, number, boolean, null, or a list of them",
);

export const MappingMatchSchema = v.strictObject({
  /** Exact, case-sensitive hook name with outer slashes trimmed (`github/push`). */
  path: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  /** Exact match on the payload's top-level string field `source`. */
  source: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  /** Request headers (names case-insensitive) with their exact value or a list of alternatives. */
  headers: v.optional(v.record(NonEmpty, HeaderValues)),
  /** Dotted paths into the parsed body (`data.object.status`) with their exact value or a list of alternatives. */
  payload: v.optional(v.record(NonEmpty, PayloadValues)),
});

/** How the mapping's sender signs its requests. */
export const MappingVerifySchema = v.strictObject({
  scheme: v.picklist(SIGNATURE_SCHEMES, `must be one of ${SIGNATURE_SCHEMES.join(", ")}`),
  secret: v.optional(Secret),
  /** Several during a rotation: any one that verifies is enough. */
  secrets: v.optional(
    v.pipe(v.array(Secret, "must be a list of secrets"), v.minLength(1, "must list at least one secret")),
  ),
  toleranceSeconds: v.optional(
    v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1")),
    300,
  ),
  publicUrl: v.optional(v.pipe(v.string(), v.url("must be a full URL (https://…)"))),
  header: v.optional(NonEmpty),
  algorithm: v.optional(v.picklist(HMAC_ALGORITHMS, `must be one of ${HMAC_ALGORITHMS.join(", ")}`)),
  encoding: v.optional(v.picklist(SIGNATURE_ENCODINGS, `must be one of ${SIGNATURE_ENCODINGS.join(", ")}`)),
  prefix: v.optional(v.string()),
  timestampHeader: v.optional(NonEmpty),
  signedContent: v.optional(NonEmpty),
  idHeader: v.optional(NonEmpty),
  /** Whether the hook token is also accepted on this path. */
  tokenAlso: v.optional(v.boolean(), true),
});

/** A fixed success answer for senders that read it (a Slack slash command's text, Twilio's TwiML). */
export const MappingResponseSchema = v.strictObject({
  status: v.optional(v.picklist([200, 202, 204], "must be 200, 202 or 204"), 200),
  contentType: v.optional(NonEmpty),
  /** A template rendered with the request's payload, headers and query. */
  body: v.optional(v.string()),
});

/** Where a transform runs: a pool of worker threads (stoppable at its limits), or the gateway's own thread. */
export const TRANSFORM_ISOLATIONS = ["worker", "inline"] as const;

export const MappingTransformSchema = v.strictObject({
  module: v.pipe(v.string(), v.minLength(1, "must name a module inside transformsDir")),
  export: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** `inline` opts out of the worker pool for trusted, latency-critical code: it can then block the gateway. */
  isolate: v.optional(v.picklist(TRANSFORM_ISOLATIONS, 'must be "worker" or "inline"'), "worker"),
});

/** An agent mapping whose answer waits for the turn's outcome, as `waitForCompletion: true` does on `/agent`. */
const CompletionResponse = v.literal(
  "completion",
  'must be "completion" or an object { status, contentType, body }',
);

export const MappingSchema = v.strictObject({
  id: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  match: v.optional(MappingMatchSchema),
  action: v.optional(v.picklist(["wake", "agent"]), "agent"),
  wakeMode: v.optional(WakeModeSchema, "now"),
  name: TemplateText,
  sessionKey: TemplateText,
  to: TemplateText,
  model: TemplateText,
  thinking: TemplateText,
  textTemplate: TemplateText,
  messageTemplate: TemplateText,
  deliver: v.optional(v.boolean(), true),
  channel: v.optional(v.pipe(v.string(), v.minLength(1)), "last"),
  timeoutSeconds: v.optional(v.number(), 600),
  transform: v.optional(MappingTransformSchema),
  forEach: v.optional(v.pipe(v.string(), v.minLength(1))),
  maxBodyBytes: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_MAPPING_BODY_BYTES, "must be at most 33554432 (32 MiB)"),
    ),
  ),
  allowUnsafeExternalContent: v.optional(v.boolean(), false),
  verify: v.optional(MappingVerifySchema),
  /** A fixed success answer, or `"completion"`: wait for the agent turn and answer with its outcome. */
  response: v.optional(v.union([CompletionResponse, MappingResponseSchema])),
  /** Another spelling of `response: "completion"`. */
  respond: v.optional(v.literal("completion", 'must be "completion"')),
});

export type MappingConfig = v.InferOutput<typeof MappingSchema>;
export type MappingInput = v.InferInput<typeof MappingSchema>;
export type MappingVerifyConfig = v.InferOutput<typeof MappingVerifySchema>;
export type MappingResponseConfig = v.InferOutput<typeof MappingResponseSchema>;

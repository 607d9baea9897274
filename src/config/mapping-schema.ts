/** @module The mapping entry of `hooks.mappings`: the one declaration of its shape. */
import * as v from "valibot";
import { HMAC_ALGORITHMS, SIGNATURE_ENCODINGS, SIGNATURE_SCHEMES } from "../verify/signature-scheme.js";
import { SESSION_MODES, WakeModeSchema } from "../vocabulary.js";
import { secretField } from "./secret-schema.js";
import { MaxConcurrentTurnsSchema } from "./turn-limits-schema.js";

// Each field's `v.description` is its entry in docs/configuration.md and in the JSON Schemas (`npm run schemas`).

/** Largest body a mapping may accept for its own path (32 MiB). */
export const MAX_MAPPING_BODY_BYTES = 33_554_432;

/** A `{{template}}` field: trimmed after rendering, and an empty result counts as unset. */
const TemplateText = (description: string) => v.pipe(v.optional(v.string()), v.description(description));

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
const Secret = secretField(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")));

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
  path: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
    v.description(
      "Exact, case-sensitive hook name with outer slashes trimmed (`github/push`), written as a sender sends it: percent-encoded where a URL needs it (a space as `%20`). Unset: any name.",
    ),
  ),
  source: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
    v.description("Exact match on the payload's top-level string field `source`. Unset: any."),
  ),
  headers: v.pipe(
    v.optional(v.record(NonEmpty, HeaderValues)),
    v.description(
      "Request headers (names in any letter case) with their exact, case-sensitive value or a list of alternatives; a repeated header is its values joined with `, `. Credential and signature headers are invisible here ([Routing on headers and payload](mappings.md#routing-on-headers-and-payload)).",
    ),
  ),
  payload: v.pipe(
    v.optional(v.record(NonEmpty, PayloadValues)),
    v.description(
      'Dotted paths into the parsed body (`data.object.status`, `items[0].kind`) with their exact value (a string, number, boolean or `null`) or a list of alternatives. `null` means an explicit null, not a missing field, and `1` is not `"1"`.',
    ),
  ),
});

export const MappingVerifySchema = v.strictObject({
  scheme: v.pipe(
    v.picklist(SIGNATURE_SCHEMES, `must be one of ${SIGNATURE_SCHEMES.join(", ")}`),
    v.description(
      "How the sender signs: what each scheme checks is in [Signed senders](mappings.md#signed-senders-verify); `hmac` is any other sender.",
    ),
  ),
  secret: v.pipe(
    v.optional(Secret),
    v.description("The signing secret; exactly one of `secret` and `secrets`."),
  ),
  secrets: v.pipe(
    v.optional(
      v.pipe(v.array(Secret, "must be a list of secrets"), v.minLength(1, "must list at least one secret")),
    ),
    v.description(
      'Several secrets during a rotation (`[{ env: "NEW_SECRET" }, { env: "OLD_SECRET" }]`): any one that verifies is enough.',
    ),
  ),
  toleranceSeconds: v.pipe(
    v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1")), 300),
    v.description(
      "How far a signed timestamp may be from now, in either direction (`stripe`, `slack`, `standard-webhooks`, and `hmac` with `timestampHeader`).",
    ),
  ),
  publicUrl: v.pipe(
    v.optional(v.pipe(v.string(), v.url("must be a full URL (https://…)"))),
    v.description(
      "`twilio`, required: the URL exactly as Twilio calls it, scheme, host and port included, without a query string (each request's query is appended as received).",
    ),
  ),
  header: v.pipe(
    v.optional(NonEmpty),
    v.description("`hmac`, required: the header carrying the signature (it joins the credentials)."),
  ),
  algorithm: v.pipe(
    v.optional(v.picklist(HMAC_ALGORITHMS, `must be one of ${HMAC_ALGORITHMS.join(", ")}`)),
    v.description("`hmac`: the hash of the HMAC. Unset: `sha256`."),
  ),
  encoding: v.pipe(
    v.optional(v.picklist(SIGNATURE_ENCODINGS, `must be one of ${SIGNATURE_ENCODINGS.join(", ")}`)),
    v.description("`hmac`: how the signature is written. Unset: `hex`."),
  ),
  prefix: v.pipe(
    v.optional(v.string()),
    v.description('`hmac`: text before the signature (`"sha256="`). Unset: none.'),
  ),
  timestampHeader: v.pipe(
    v.optional(NonEmpty),
    v.description("`hmac`: the header with the signed Unix timestamp."),
  ),
  signedContent: v.pipe(
    v.optional(NonEmpty),
    v.description(
      "`hmac`: what is signed, with the placeholders `{body}` (required), `{timestamp}` and `{id}`. Unset: `{body}`, or `{timestamp}.{body}` with `timestampHeader`.",
    ),
  ),
  idHeader: v.pipe(
    v.optional(NonEmpty),
    v.description("`hmac`: the header with the sender's delivery id (for `{id}` and for duplicates)."),
  ),
  tokenAlso: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "Whether the hook token (`Authorization: Bearer …`) is also accepted on this path; `false`: only a signature.",
    ),
  ),
});

export const MappingResponseSchema = v.strictObject({
  status: v.pipe(
    v.optional(v.picklist([200, 202, 204], "must be 200, 202 or 204"), 200),
    v.description("The success status; `204` sends no body."),
  ),
  contentType: v.pipe(
    v.optional(NonEmpty),
    v.description('E.g. `"text/xml"` for TwiML. Unset: `text/plain; charset=utf-8`.'),
  ),
  body: v.pipe(
    v.optional(v.string()),
    v.description(
      "A [template](mappings.md#templates) rendered with the request's payload, headers and query. Unset: empty.",
    ),
  ),
});

/** Where a transform runs: a pool of worker threads (stoppable at its limits), or the gateway's own thread. */
export const TRANSFORM_ISOLATIONS = ["worker", "inline"] as const;

export const MappingTransformSchema = v.strictObject({
  module: v.pipe(
    v.string(),
    v.minLength(1, "must name a module inside transformsDir"),
    v.description(
      "A `.ts`, `.mts`, `.cts`, `.js`, `.mjs` or `.cjs` module in `hooks.transformsDir`; absolute paths, `..`, URLs and symlinks that lead out of it are refused.",
    ),
  ),
  export: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1))),
    v.description("The export to call. Unset: `default`, then `transform`."),
  ),
  isolate: v.pipe(
    v.optional(v.picklist(TRANSFORM_ISOLATIONS, 'must be "worker" or "inline"'), "worker"),
    v.description(
      "`worker`: a worker thread, stopped at its time and memory limits. `inline`: the gateway's own thread, for trusted code where every fraction of a millisecond counts; a synchronous loop there blocks everything ([Worker or inline](transforms.md#worker-or-inline)).",
    ),
  ),
});

/** An agent mapping whose answer waits for the turn's outcome, as `waitForCompletion: true` does on `/agent`. */
const CompletionResponse = v.literal(
  "completion",
  'must be "completion" or an object { status, contentType, body }',
);

const TEMPLATE_RULE = "Trimmed after rendering; empty means unset.";

/** The longest operator instructions: a few paragraphs, not a prompt library (each request's text carries them). */
export const MAX_INSTRUCTIONS_CHARS = 4_000;

/**
 * The operator's text, placed before the wrapped content. Never a template: a `{{…}}` in it would put payload text
 * outside the wrapper, so it is refused rather than left literal (an operator who wrote one expects it filled in).
 */
const Instructions = v.pipe(
  v.string(),
  v.maxLength(MAX_INSTRUCTIONS_CHARS, `must be at most ${MAX_INSTRUCTIONS_CHARS} characters`),
  v.check(
    (text) => !text.includes("{{"),
    "is not a template: {{…}} would put payload text outside the safety wrapper; payload values belong in textTemplate or messageTemplate",
  ),
);

export const MappingSchema = v.strictObject({
  id: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
    v.description(
      "The mapping's name in logs, events, metrics and replay output; unique. Unset: `mapping-<index>`.",
    ),
  ),
  match: v.pipe(
    v.optional(MappingMatchSchema),
    v.description(
      "What the request must be for this mapping to own it: every predicate given must hold. Unset: a catch-all.",
    ),
  ),
  action: v.pipe(
    v.optional(v.picklist(["wake", "agent"]), "agent"),
    v.description(
      "`wake` queues a system event for the main session; `agent` runs an isolated agent turn ([The HTTP contract](http.md#the-http-contract)).",
    ),
  ),
  wakeMode: v.pipe(
    v.optional(WakeModeSchema, "now"),
    v.description(
      "`now` asks for a heartbeat at once (an agent action: when its turn has finished); `next-heartbeat` leaves it to the next one. It is the `mode` of a wake action and the `wakeMode` of an agent action.",
    ),
  ),
  agentId: v.pipe(
    v.optional(NonEmpty),
    v.description(
      "The agent the action goes to: one the host runs and `hooks.allowedAgentIds` allows, else a config error. Fixed text, not a template. Unset: the default agent.",
    ),
  ),
  sessionMode: v.pipe(
    v.optional(v.picklist(SESSION_MODES, 'must be "isolated" or "persistent"'), "isolated"),
    v.description(
      "`isolated`: each agent turn starts with no earlier context, whatever its key; `persistent`: the turns of one session key share one conversation, so a persistent mapping needs a `sessionKey` or `hooks.defaultSessionKey` ([Session modes](http.md#session-modes)).",
    ),
  ),
  name: TemplateText(
    `Template of the agent turn's name, the prefix of its summary line in the main session. ${TEMPLATE_RULE}`,
  ),
  sessionKey: TemplateText(
    `Template of the agent turn's session key; an empty rendered key is a 400. ${TEMPLATE_RULE}`,
  ),
  to: TemplateText(`Template of the reply's recipient. ${TEMPLATE_RULE}`),
  model: TemplateText(`Template of the agent turn's model. ${TEMPLATE_RULE}`),
  thinking: TemplateText(`Template of the agent turn's thinking level. ${TEMPLATE_RULE}`),
  textTemplate: TemplateText(
    "Template of a wake action's text; the final action needs one that is not empty ([Templates](mappings.md#templates)).",
  ),
  messageTemplate: TemplateText(
    "Template of an agent action's message; the final action needs one that is not empty.",
  ),
  instructions: v.pipe(
    v.optional(Instructions),
    v.description(
      `Trusted text from the config, placed before the safety wrapper around the payload's text (a wake's text, an agent's message, a transform's too), so the agent knows what to do with what follows ([Operator instructions](mappings.md#operator-instructions)). Not a template: \`{{…}}\` is refused. At most ${MAX_INSTRUCTIONS_CHARS} characters; trimmed, empty means unset.`,
    ),
  ),
  deliver: v.pipe(
    v.optional(v.boolean(), true),
    v.description("Whether the agent's reply is delivered to `channel` / `to`, as on `/agent`."),
  ),
  channel: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1)), "last"),
    v.description(
      "The reply's channel: `last`, or one the gateway offers ([`POST /hooks/agent`](http.md#post-hooksagent)).",
    ),
  ),
  timeoutSeconds: v.pipe(
    v.optional(v.number(), 600),
    v.description("Seconds the agent turn may take, with the rules of `/agent`'s `timeoutSeconds`."),
  ),
  transform: v.pipe(
    v.optional(MappingTransformSchema),
    v.description(
      "A module that computes the action in code, when a template is not enough ([Transforms](mappings.md#transforms)).",
    ),
  ),
  forEach: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1))),
    v.description(
      "A top-level array of the payload: one action per item (at most 200; the rest are dropped with a warning), each rendered with that array replaced by `[item]`.",
    ),
  ),
  maxBodyBytes: v.pipe(
    v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(MAX_MAPPING_BODY_BYTES, "must be at most 33554432 (32 MiB)"),
      ),
    ),
    v.description("A larger body limit for this mapping's path, in bytes. Unset: `hooks.maxBodyBytes`."),
  ),
  maxConcurrentTurns: MaxConcurrentTurnsSchema,
  allowUnsafeExternalContent: v.pipe(
    v.optional(v.boolean(), false),
    v.description("Dangerous: no safety wrapper around this mapping's text."),
  ),
  verify: v.pipe(
    v.optional(MappingVerifySchema),
    v.description(
      "How the sender of this mapping's path signs its requests; the path is then guarded by that signature ([Signed senders](mappings.md#signed-senders-verify), [Connect a sender](senders.md#connect-a-sender)). It needs `match.path`, and every mapping on that path that declares `verify` must declare the same one.",
    ),
  ),
  response: v.pipe(
    v.optional(v.union([CompletionResponse, MappingResponseSchema])),
    v.description(
      "A fixed success answer instead of the JSON body, for senders that read it: a Slack slash command's text, Twilio's TwiML ([Fixed answers](mappings.md#fixed-answers-response)). Or `\"completion\"`: an agent action waits for its turn and answers with the outcome ([Waiting for the outcome](http.md#waiting-for-the-outcome)).",
    ),
  ),
  respond: v.pipe(
    v.optional(v.literal("completion", 'must be "completion"')),
    v.description('Another spelling of `response: "completion"`.'),
  ),
});

export type MappingConfig = v.InferOutput<typeof MappingSchema>;
export type MappingInput = v.InferInput<typeof MappingSchema>;
export type MappingVerifyConfig = v.InferOutput<typeof MappingVerifySchema>;
export type MappingResponseConfig = v.InferOutput<typeof MappingResponseSchema>;

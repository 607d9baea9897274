/** @module The fixture file: a recorded request and, optionally, what it must produce. */
import { isDeepStrictEqual } from "node:util";
import * as v from "valibot";
import { HOOK_EVENT_SCHEMAS } from "../events.js";

const EVENT_NAMES = Object.keys(HOOK_EVENT_SCHEMAS) as [
  keyof typeof HOOK_EVENT_SCHEMAS,
  ...(keyof typeof HOOK_EVENT_SCHEMAS)[],
];

/** Whether `copy` is the JSON that `raw` holds (key order aside). */
function sameJson(raw: string, copy: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(raw), copy);
  } catch {
    return false;
  }
}

export const FixtureRequestSchema = v.pipe(
  v.strictObject({
    method: v.optional(v.string(), "POST"),
    /** The hook name (`github/push`) or the full path (`/hooks/github/push`). */
    path: v.pipe(v.string(), v.minLength(1, "path must name a hook")),
    headers: v.optional(v.record(v.string(), v.string()), {}),
    query: v.optional(v.record(v.string(), v.string()), {}),
    /** A JSON value sent as JSON (or form-encoded when the content type says so). */
    body: v.optional(v.unknown()),
    /** The exact bytes of the body, as text. */
    rawBody: v.optional(v.string()),
    /**
     * A readable copy of a JSON `rawBody` (captures and journal fixtures write one). Never sent: `rawBody` is; the
     * copy must match it.
     */
    bodyJson: v.optional(v.unknown()),
    /** The exact bytes of the body, base64 (a body that is not UTF-8 text). */
    rawBodyBase64: v.optional(v.pipe(v.string(), v.base64("must be base64"))),
    /** A file holding the body, relative to the fixture file. */
    bodyFile: v.optional(v.string()),
  }),
  v.check(
    (request) =>
      [request.body, request.rawBody, request.rawBodyBase64, request.bodyFile].filter((x) => x !== undefined)
        .length <= 1,
    "give at most one of body, rawBody, rawBodyBase64 and bodyFile",
  ),
  v.forward(
    v.check(
      (request) =>
        request.bodyJson === undefined ||
        (request.rawBody !== undefined && sameJson(request.rawBody, request.bodyJson)),
      "bodyJson is a readable copy of rawBody and must match it: to send a changed body, edit rawBody, or rename bodyJson to body and delete rawBody",
    ),
    ["bodyJson"],
  ),
);

export const FixtureExpectationSchema = v.strictObject({
  status: v.pipe(v.number(), v.integer()),
  /** Each entry must match at least one emitted event: same name, payload containing `match`. */
  events: v.optional(
    v.array(
      v.strictObject({
        event: v.picklist(EVENT_NAMES),
        match: v.optional(v.record(v.string(), v.unknown()), {}),
      }),
    ),
  ),
});

/**
 * How replay signs a request on a signed path: freshly, with the mapping's secret (the default, `true`); not at
 * all (`false`: the recorded headers are sent as they are); or on purpose wrongly, for a negative fixture.
 */
export const FixtureResignSchema = v.union([
  v.boolean(),
  v.strictObject({
    /** Sign as if this many seconds ago (negative: in the future): a stale or early timestamp. */
    ageSeconds: v.optional(v.number()),
    /** Sign with this secret instead of the mapping's: a wrong secret. */
    secret: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** Change one byte of the body after signing: a tampered body. */
    tamper: v.optional(v.boolean()),
  }),
]);

export const FixtureSchema = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1)),
  description: v.optional(v.string()),
  request: FixtureRequestSchema,
  resign: v.optional(FixtureResignSchema, true),
  expect: v.optional(FixtureExpectationSchema),
});

export type Fixture = v.InferOutput<typeof FixtureSchema>;
export type FixtureInput = v.InferInput<typeof FixtureSchema>;
export type FixtureExpectation = v.InferOutput<typeof FixtureExpectationSchema>;
export type FixtureResign = v.InferOutput<typeof FixtureResignSchema>;

/** @module Body schemas of POST /wake and /agent; mapped and transformed actions reuse them. */
import * as v from "valibot";
import { SessionModeSchema, ThinkingSchema, WakeModeSchema } from "../vocabulary.js";

export const MAX_TIMEOUT_SECONDS = 86_400;
export const DEFAULT_TIMEOUT_SECONDS = 600;

/**
 * valibot reports a missing key with the object's own message; say which key is missing instead of
 * repeating what the object is.
 */
export function objectMessage(what: string) {
  return (issue: v.ObjectIssue): string =>
    issue.received === "undefined" && issue.path && issue.path.length > 0
      ? `${String(issue.path.at(-1)?.key)} is required`
      : what;
}

const RequiredText = (field: string) =>
  v.pipe(v.string(`${field} must be a string`), v.trim(), v.nonEmpty(`${field} must not be empty`));
const OptionalText = (field: string) => v.optional(RequiredText(field));

export const TimeoutSecondsSchema = v.pipe(
  v.number("timeoutSeconds must be a number"),
  v.finite("timeoutSeconds must be a finite number"),
  v.transform(Math.floor),
  v.minValue(1, "timeoutSeconds must be a positive number of seconds"),
  v.maxValue(MAX_TIMEOUT_SECONDS, `timeoutSeconds must be at most ${MAX_TIMEOUT_SECONDS}`),
);

export const WakeBodySchema = v.object(
  {
    text: RequiredText("text"),
    mode: v.optional(WakeModeSchema, "now"),
    agentId: OptionalText("agentId"),
  },
  objectMessage("the body must be a JSON object"),
);

export const AgentBodySchema = v.object(
  {
    message: RequiredText("message"),
    name: v.optional(RequiredText("name"), "Hook"),
    sessionKey: OptionalText("sessionKey"),
    sessionMode: v.optional(SessionModeSchema, "isolated"),
    agentId: OptionalText("agentId"),
    wakeMode: v.optional(WakeModeSchema, "now"),
    deliver: v.optional(v.boolean("deliver must be true or false"), true),
    channel: v.optional(RequiredText("channel"), "last"),
    to: OptionalText("to"),
    model: OptionalText("model"),
    thinking: v.optional(ThinkingSchema),
    timeoutSeconds: v.optional(TimeoutSecondsSchema, DEFAULT_TIMEOUT_SECONDS),
    /** Hold the answer until the turn finishes (or its deadline passes), then answer with its outcome. */
    waitForCompletion: v.optional(v.boolean("waitForCompletion must be true or false"), false),
  },
  objectMessage("the body must be a JSON object"),
);

/** What a transform may return to override the mapping's action; fields are not template-rendered. */
export const HookActionOverrideSchema = v.object({
  kind: v.optional(v.picklist(["wake", "agent"], 'kind must be "wake" or "agent"')),
  text: v.optional(v.string()),
  mode: v.optional(WakeModeSchema),
  message: v.optional(v.string()),
  name: v.optional(v.string()),
  sessionKey: v.optional(v.string()),
  sessionMode: v.optional(SessionModeSchema),
  agentId: v.optional(v.string()),
  wakeMode: v.optional(WakeModeSchema),
  deliver: v.optional(v.boolean()),
  channel: v.optional(v.string()),
  to: v.optional(v.string()),
  model: v.optional(v.string()),
  thinking: v.optional(ThinkingSchema),
  timeoutSeconds: v.optional(v.number()),
});

export type WakeBody = v.InferOutput<typeof WakeBodySchema>;
export type AgentBody = v.InferOutput<typeof AgentBodySchema>;
export type HookActionOverride = v.InferInput<typeof HookActionOverrideSchema>;

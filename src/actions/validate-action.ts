/** @module Validates a wake or agent body against its schema and the gateway's policies into a ready action. */
import * as v from "valibot";
import { joinPath } from "../config/issues.js";
import type { ModelPolicy } from "../config/models.js";
import { type ErrorDetail, HookError } from "../errors.js";
import type { Ids } from "../ids.js";
import { checkChannel, type Thinking, type WakeMode } from "../vocabulary.js";
import { AgentBodySchema, WakeBodySchema } from "./action-schemas.js";
import { resolveSessionKey, type SessionKeyOrigin, type SessionKeyPolicy } from "./session-key.js";

export interface WakeAction {
  kind: "wake";
  text: string;
  mode: WakeMode;
}

export interface AgentAction {
  kind: "agent";
  message: string;
  name: string;
  sessionKey: string;
  wakeMode: WakeMode;
  deliver: boolean;
  channel: string;
  to?: string;
  model?: string;
  thinking?: Thinking;
  timeoutSeconds: number;
}

export type HookAction = WakeAction | AgentAction;

export interface ActionPolicy {
  sessionKeys: SessionKeyPolicy;
  channels: ReadonlySet<string>;
  models: ModelPolicy;
  /** Where generated session keys come from. */
  ids: Ids;
}

/** valibot issues as response details, paths written `messages[2].from`. */
export function toErrorDetails(issues: readonly v.BaseIssue<unknown>[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: joinPath("", ...(issue.path ?? []).map((item) => item.key as string | number)),
    message: issue.message,
  }));
}

export function invalidPayload(
  issues: readonly v.BaseIssue<unknown>[],
  what = "The request body is invalid",
): HookError {
  const details = toErrorDetails(issues);
  const first = details[0];
  const summary = first ? (first.path ? `${first.path}: ${first.message}` : first.message) : "invalid body";
  return new HookError("INVALID_PAYLOAD", `${what}: ${summary}.`, { details });
}

const invalid = (issues: readonly v.BaseIssue<unknown>[]) => invalidPayload(issues);

export function validateWakeAction(body: unknown): WakeAction {
  const parsed = v.safeParse(WakeBodySchema, body);
  if (!parsed.success) throw invalid(parsed.issues);
  return { kind: "wake", text: parsed.output.text, mode: parsed.output.mode };
}

export function validateAgentAction(
  body: unknown,
  policy: ActionPolicy,
  sessionKeyOrigin: SessionKeyOrigin = "caller",
): AgentAction {
  const parsed = v.safeParse(AgentBodySchema, body);
  if (!parsed.success) throw invalid(parsed.issues);
  const input = parsed.output;

  const channel = checkChannel(input.channel, input.to, policy.channels);
  if (!channel.ok) {
    throw new HookError("INVALID_PAYLOAD", `The request body is invalid: ${channel.message}.`, {
      details: [{ path: channel.field, message: channel.message }],
    });
  }

  let model: string | undefined;
  if (input.model !== undefined) {
    model = policy.models.resolve(input.model);
    if (model === undefined) {
      const message = policy.models.enforced
        ? `model "${input.model}" is not in the allow-list (agents.defaults.models)`
        : `model must be a provider/model reference, got "${input.model}"`;
      throw new HookError("MODEL_NOT_ALLOWED", `The request body is invalid: ${message}.`, {
        details: [{ path: "model", message }],
      });
    }
  }

  const action: AgentAction = {
    kind: "agent",
    message: input.message,
    name: input.name,
    sessionKey: resolveSessionKey(policy.sessionKeys, input.sessionKey, sessionKeyOrigin, policy.ids),
    wakeMode: input.wakeMode,
    deliver: input.deliver,
    channel: channel.channel,
    timeoutSeconds: input.timeoutSeconds,
  };
  if (input.to !== undefined) action.to = input.to;
  if (model !== undefined) action.model = model;
  if (input.thinking !== undefined) action.thinking = input.thinking;
  return action;
}

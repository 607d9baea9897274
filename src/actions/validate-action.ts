/** @module Validates a wake or agent body against its schema and the gateway's policies (agent ids among them) into a ready action. */
import * as v from "valibot";
import type { Ids } from "../clock.js";
import { type AgentPolicy, normalizeAgentId } from "../config/agents.js";
import { joinPath } from "../config/issues.js";
import type { ModelPolicy } from "../config/models.js";
import { type ErrorDetail, HookError } from "../errors.js";
import { checkChannel, type SessionMode, type Thinking, type WakeMode } from "../vocabulary.js";
import { AgentBodySchema, WakeBodySchema } from "./action-schemas.js";
import { resolveSessionKey, type SessionKeyOrigin, type SessionKeyPolicy } from "./session-key.js";

export interface WakeAction {
  kind: "wake";
  text: string;
  mode: WakeMode;
  agentId: string;
}

export interface AgentAction {
  kind: "agent";
  message: string;
  name: string;
  sessionKey: string;
  sessionMode: SessionMode;
  agentId: string;
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
  agents: AgentPolicy;
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

/** Who chose each of an action's routing fields: a body's are the caller's, a mapping's fixed fields the operator's. */
export interface ChoiceOrigins {
  sessionKey: SessionKeyOrigin;
  agentId: SessionKeyOrigin;
}

const FROM_CALLER: ChoiceOrigins = { sessionKey: "caller", agentId: "caller" };

export function validateWakeAction(
  body: unknown,
  agents: AgentPolicy,
  agentIdOrigin: SessionKeyOrigin = "caller",
): WakeAction {
  const parsed = v.safeParse(WakeBodySchema, body);
  if (!parsed.success) throw invalid(parsed.issues);
  const { text, mode } = parsed.output;
  return { kind: "wake", text, mode, agentId: resolveAgentId(agents, parsed.output.agentId, agentIdOrigin) };
}

export function validateAgentAction(
  body: unknown,
  policy: ActionPolicy,
  origins: ChoiceOrigins = FROM_CALLER,
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

  const agentId = resolveAgentId(policy.agents, input.agentId, origins.agentId);
  // One conversation per key: without a key of its own or a configured default, each run would get a new one.
  if (
    input.sessionMode === "persistent" &&
    input.sessionKey === undefined &&
    policy.sessionKeys.defaultSessionKey === undefined
  ) {
    const message = 'sessionMode "persistent" needs a sessionKey (or hooks.defaultSessionKey)';
    throw new HookError("INVALID_PAYLOAD", `The request body is invalid: ${message}.`, {
      details: [{ path: "sessionKey", message }],
    });
  }
  const action: AgentAction = {
    kind: "agent",
    message: input.message,
    name: input.name,
    sessionKey: resolveSessionKey(policy.sessionKeys, input.sessionKey, origins.sessionKey, policy.ids),
    sessionMode: input.sessionMode,
    agentId,
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

export type { AgentPolicy };

/**
 * The agent an action goes to, or AGENT_ID_NOT_ALLOWED naming the id. An omitted id is the default agent and must
 * pass `allowedAgentIds` like any other: the allow-list bounds every path to an agent. `operator` is an id written in
 * a mapping (checked at load too), `caller` one from a body or a transform, which `allowRequestAgentId` gates.
 */
export function resolveAgentId(
  policy: AgentPolicy,
  requested: string | undefined,
  origin: SessionKeyOrigin,
): string {
  // The caller's own text goes into the message: bounded, and quoted so a strange id reads as one.
  const shown = (id: string) => JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id);
  const refuse = (message: string) =>
    new HookError("AGENT_ID_NOT_ALLOWED", message, { details: [{ path: "agentId", message }] });
  if (requested === undefined) {
    const id = policy.defaultAgentId;
    if (policy.allowedAgentIds !== undefined && !policy.allowedAgentIds.has(id)) {
      throw refuse(`The default agent "${id}" is not in hooks.allowedAgentIds.`);
    }
    return id;
  }
  if (origin === "caller" && !policy.allowRequestAgentId) {
    throw refuse(
      `Choosing an agent is turned off here (hooks.allowRequestAgentId is false): ${shown(requested)}.`,
    );
  }
  const id = normalizeAgentId(requested);
  if (!policy.agentIds.has(id)) {
    throw refuse(`There is no agent ${shown(requested)} (agents: ${[...policy.agentIds].join(", ")}).`);
  }
  if (policy.allowedAgentIds !== undefined && !policy.allowedAgentIds.has(id)) {
    throw refuse(`The agent ${shown(requested)} is not in hooks.allowedAgentIds.`);
  }
  return id;
}

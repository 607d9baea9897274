/** @module Agent policy: which agent a wake or agent run goes to, who may choose it, and which agents hooks may reach. */
import { type AgentPolicy, normalizeAgentId } from "../config/agents.js";
import { HookError } from "../errors.js";
import type { SessionKeyOrigin } from "./session-key.js";

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

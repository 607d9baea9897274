/** @module Which agents a gateway config declares and which is the default, read the way OpenClaw 2026.9 reads its own. */
import { field, isPlainObject } from "./plain-object.js";

/** The agents a host runs: hooks may target one of them by id; a request that names none goes to the default. */
export interface HostAgents {
  ids: readonly string[];
  /** One of `ids`. */
  defaultId: string;
}

/** A gateway that declares no agents has one: `main`, as OpenClaw's. */
export const MAIN_AGENT_ID = "main";
export const ONE_AGENT: HostAgents = { ids: [MAIN_AGENT_ID], defaultId: MAIN_AGENT_ID };

/** OpenClaw compares agent ids without regard to case and stores them in lower case. */
export const normalizeAgentId = (id: string) => id.trim().toLowerCase();

const idOf = (value: unknown) =>
  typeof value === "string" && value.trim() !== "" ? normalizeAgentId(value) : undefined;

/**
 * The agents of a config shaped like OpenClaw's: `agents.entries.<id>` (and the legacy `agents.list[].id` that
 * `openclaw doctor` migrates). The default is the first of `agents.defaults.heartbeat.agentId` (the agent whose
 * heartbeat reads wakes: a wake queued for another might wait for a heartbeat that never comes),
 * `agents.defaults.systemAgent.agentId` (OpenClaw's owner of unscoped work), a legacy `default: true` entry, `main`
 * when declared, the first declared; with none declared, `main` alone.
 */
export function configuredAgents(config: unknown): HostAgents {
  const agents = field(config, "agents");
  const entries = field(agents, "entries");
  const list = field(agents, "list");
  const ids: string[] = [];
  const add = (id: string | undefined) => {
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  };
  if (isPlainObject(entries)) {
    for (const key of Object.keys(entries)) add(idOf(key));
  }
  let legacyDefault: string | undefined;
  if (Array.isArray(list)) {
    for (const entry of list) {
      const id = idOf(field(entry, "id"));
      add(id);
      if (field(entry, "default") === true) legacyDefault ??= id;
    }
  }
  const defaults = field(agents, "defaults");
  const named =
    idOf(field(field(defaults, "heartbeat"), "agentId")) ??
    idOf(field(field(defaults, "systemAgent"), "agentId")) ??
    legacyDefault;
  if (ids.length === 0) {
    add(named);
    add(MAIN_AGENT_ID);
    return { ids, defaultId: named ?? MAIN_AGENT_ID };
  }
  const defaultId = named ?? (ids.includes(MAIN_AGENT_ID) ? MAIN_AGENT_ID : ids[0]!);
  add(defaultId);
  return { ids, defaultId };
}

/** The agent policy a request is checked against: the host's agents and the config's `allowRequestAgentId`, `allowedAgentIds`. */
export interface AgentPolicy {
  allowRequestAgentId: boolean;
  /** Normalized ids hooks may reach; undefined: every agent. */
  allowedAgentIds: ReadonlySet<string> | undefined;
  /** Normalized ids of the agents the host runs. */
  agentIds: ReadonlySet<string>;
  defaultAgentId: string;
}

export function createAgentPolicy(
  hooks: { allowRequestAgentId: boolean; allowedAgentIds?: readonly string[] | undefined },
  agents: HostAgents,
): AgentPolicy {
  const allowed = hooks.allowedAgentIds;
  return {
    allowRequestAgentId: hooks.allowRequestAgentId,
    allowedAgentIds:
      allowed === undefined || allowed.includes("*") ? undefined : new Set(allowed.map(normalizeAgentId)),
    agentIds: new Set(agents.ids.map(normalizeAgentId)),
    defaultAgentId: normalizeAgentId(agents.defaultId),
  };
}

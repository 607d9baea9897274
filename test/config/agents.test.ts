/** @module The agents a config declares and its default, read as OpenClaw 2026.9 reads its own config. */
import { describe, expect, it } from "vitest";
import { configuredAgents, createAgentPolicy } from "../../src/config/agents.js";

describe("configuredAgents", () => {
  it.each([
    ["no agents: one, main", {}, { ids: ["main"], defaultId: "main" }],
    [
      "entries: main is the default when declared",
      { agents: { entries: { ops: {}, main: {} } } },
      { ids: ["ops", "main"], defaultId: "main" },
    ],
    [
      "entries without main: the first",
      { agents: { entries: { Ops: {}, audit: {} } } },
      { ids: ["ops", "audit"], defaultId: "ops" },
    ],
    [
      "systemAgent names the default",
      { agents: { entries: { main: {}, ops: {} }, defaults: { systemAgent: { agentId: "ops" } } } },
      { ids: ["main", "ops"], defaultId: "ops" },
    ],
    [
      "the heartbeat agent before it: the one whose heartbeat reads wakes",
      {
        agents: {
          entries: { main: {}, ops: {}, home: {} },
          defaults: { heartbeat: { agentId: "home" }, systemAgent: { agentId: "ops" } },
        },
      },
      { ids: ["main", "ops", "home"], defaultId: "home" },
    ],
    [
      "a legacy list with a default: true entry",
      { agents: { list: [{ id: "a" }, { id: "b", default: true }] } },
      { ids: ["a", "b"], defaultId: "b" },
    ],
    [
      "only a system agent named",
      { agents: { defaults: { systemAgent: { agentId: "home" } } } },
      { ids: ["home", "main"], defaultId: "home" },
    ],
  ])("%s", (_, config, expected) => {
    expect(configuredAgents(config)).toEqual(expected);
  });
});

describe("createAgentPolicy", () => {
  const agents = { ids: ["main", "ops"], defaultId: "main" };
  it.each([
    [undefined, undefined],
    [["*"], undefined],
    [["OPS"], new Set(["ops"])],
    [[], new Set()],
  ])("allowedAgentIds %j allows %j", (allowed, expected) => {
    const policy = createAgentPolicy({ allowRequestAgentId: false, allowedAgentIds: allowed }, agents);
    expect(policy.allowedAgentIds).toEqual(expected);
  });
});

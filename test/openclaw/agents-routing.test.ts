import { afterEach, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/index.js";
import openclawPlugin from "../../src/openclaw/index.js";
import { NO_LAST_ROUTE } from "../../src/openclaw/last-route.js";
import type { OpenClawSessionEntry } from "../../src/openclaw/openclaw-api.js";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { startEffectsOn } from "../helpers/openclaw-effects.js";
import { servePlugin } from "../helpers/openclaw-plugin-server.js";

const TOKEN = "oc-agents-token-0123456789abcdef01";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** OpenClaw 2026.9's agents: keyed entries, and the owner of unscoped work named in its defaults. */
const TWO_AGENTS = {
  agents: { entries: { main: {}, ops: {} }, defaults: { systemAgent: { agentId: "ops" } } },
};

async function serve(fake: FakeOpenClaw) {
  const server = await servePlugin(fake);
  cleanups.push(server.stop);
  return (hook: string, body: unknown) =>
    fetch(`${server.url}/intake/${hook}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
}

const intake = (extra: Record<string, unknown> = {}) => ({
  enabled: true,
  token: TOKEN,
  path: "/intake",
  ...extra,
});

describe("OpenClaw adapter: agents", () => {
  it("a wake naming no agent goes to OpenClaw's default agent, its heartbeat too, never to no owner", async () => {
    const fake = fakeOpenClaw({ config: TWO_AGENTS, pluginConfig: intake() });
    const post = await serve(fake);
    expect((await post("wake", { text: "deploy done", mode: "now" })).status).toBe(200);
    expect(fake.queue.drain("agent:ops:main")).toEqual([expect.stringContaining("deploy done")]);
    expect(fake.heartbeats).toEqual([expect.objectContaining({ intent: "immediate", agentId: "ops" })]);
  });

  it("a mapping's agentId routes its wake, and a body's agentId is refused unless hooks.allowRequestAgentId", async () => {
    const mappings = [
      { match: { path: "alerts" }, action: "wake", agentId: "main", textTemplate: "{{msg}}" },
    ];
    const fake = fakeOpenClaw({ config: TWO_AGENTS, pluginConfig: intake({ mappings }) });
    const post = await serve(fake);
    expect((await post("alerts", { msg: "disk full" })).status).toBe(200);
    expect(fake.queue.drain("agent:main:main")).toEqual([expect.stringContaining("disk full")]);
    const refused = await post("wake", { text: "x", agentId: "main" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "AGENT_ID_NOT_ALLOWED" });
    expect(fake.queue.queues.get("agent:main:main") ?? []).toEqual([]);
  });

  it("agent turns run in their agent's sessions: isolated ones each in a run session, persistent ones in the key's", async () => {
    const mappings = [
      {
        match: { path: "chat" },
        agentId: "main",
        sessionMode: "persistent",
        sessionKey: "hook:chat",
        messageTemplate: "{{text}}",
      },
    ];
    const fake = fakeOpenClaw({
      config: TWO_AGENTS,
      pluginConfig: intake({ mappings, allowRequestAgentId: true }),
    });
    const post = await serve(fake);
    for (const text of ["one", "two"]) expect((await post("chat", { text })).status).toBe(202);
    for (const message of ["a", "b"]) {
      expect((await post("agent", { message, sessionKey: "hook:fixed", agentId: "ops" })).status).toBe(202);
    }
    await expect.poll(() => fake.runs.length).toBe(4);
    const keys = fake.runs.map((run) => run.sessionKey);
    expect(keys.slice(0, 2)).toEqual(["agent:main:hook:chat", "agent:main:hook:chat"]);
    // The same key, isolated: two sessions of their own, so the second run never sees the first.
    expect(keys[2]).toMatch(/^agent:ops:hook:fixed:run:[0-9a-f-]+$/);
    expect(keys[3]).toMatch(/^agent:ops:hook:fixed:run:[0-9a-f-]+$/);
    expect(keys[2]).not.toBe(keys[3]);
  });

  it("a mapping naming an agent OpenClaw does not have, or one hooks.allowedAgentIds leaves out, stops the load naming the key", () => {
    const fake = fakeOpenClaw({
      config: TWO_AGENTS,
      pluginConfig: intake({
        allowedAgentIds: ["ops"],
        mappings: [
          { match: { path: "a" }, agentId: "nobody", messageTemplate: "x" },
          { match: { path: "b" }, agentId: "main", messageTemplate: "x" },
        ],
      }),
    });
    let thrown: unknown;
    try {
      openclawPlugin.register(fake.api);
    } catch (error) {
      thrown = error;
    }
    expect(isConfigError(thrown)).toBe(true);
    const issues = (thrown as { issues: Array<{ path: string; message: string }> }).issues;
    expect(issues).toEqual([
      {
        path: "plugins.entries.hooks-intake.config.mappings[0].agentId",
        message: expect.stringContaining('no agent "nobody"'),
      },
      {
        path: "plugins.entries.hooks-intake.config.mappings[1].agentId",
        message: expect.stringContaining(
          '"main" is not in plugins.entries.hooks-intake.config.allowedAgentIds',
        ),
      },
    ]);
  });
});

describe('OpenClaw adapter: channel "last"', () => {
  const source = { hook: "agent", requestId: "r1" };

  function setup(entries: Record<string, OpenClawSessionEntry>) {
    const fake = fakeOpenClaw({});
    for (const [key, entry] of Object.entries(entries)) fake.sessionEntries.set(key, entry);
    fake.adapters.set("telegram", { sendText: () => ({ ok: true }) });
    const { bus, results, effects } = startEffectsOn(fake);
    cleanups.push(async () => effects.stop());
    const send = (agentId?: string, to?: string) =>
      bus.emit("delivery:send", {
        source,
        runId: "run-1",
        ...(agentId === undefined ? {} : { agentId }),
        channel: "last",
        ...(to === undefined ? {} : { to }),
        text: "Deployed.",
      });
    return { fake, results, send };
  }

  /** As OpenClaw 2026.9.6 records a session that last talked on Telegram: the route and its flat context. */
  const telegram: OpenClawSessionEntry = {
    delivery: {
      kind: "external",
      route: { channel: "telegram", target: { to: "telegram:4242" } },
      context: { channel: "telegram", to: "telegram:4242" },
    },
  };

  it("delivers to the route the agent's main session last talked on, `telegram:4242` split into channel and target", async () => {
    const { fake, results, send } = setup({ "agent:ops:main": telegram });
    send("ops");
    await expect.poll(() => results).toEqual([{ source, runId: "run-1", status: "sent" }]);
    expect(fake.sent).toEqual([{ channel: "telegram", to: "4242", text: "Deployed." }]);
    expect(fake.sessionReads).toEqual([{ sessionKey: "agent:ops:main", agentId: "ops" }]);
  });

  it("a `to` written `telegram:4242` names its channel without any route; a bare `to` takes the route's channel", async () => {
    const { fake, results, send } = setup({ "agent:main:main": telegram });
    fake.adapters.set("signal", { sendText: () => ({ ok: true }) });
    send("main", "signal:+15550001111");
    send("main", "@opsteam");
    await expect.poll(() => results.length).toBe(2);
    expect(fake.sent).toEqual([
      { channel: "signal", to: "+15550001111", text: "Deployed." },
      { channel: "telegram", to: "@opsteam", text: "Deployed." },
    ]);
  });

  it("an event without an agent (a journal from before agents) reads the default agent's main session", async () => {
    const { fake, results, send } = setup({ "agent:main:main": telegram });
    send();
    await expect.poll(() => results.map((result) => result.status)).toEqual(["sent"]);
    expect(fake.sent).toEqual([{ channel: "telegram", to: "4242", text: "Deployed." }]);
  });

  it("a main session that has not talked on a channel yet is a delivery failure saying what to do", async () => {
    const { fake, results, send } = setup({ "agent:main:main": { delivery: { kind: "internal" } } });
    send("main");
    await expect
      .poll(() => results)
      .toEqual([{ source, runId: "run-1", status: "failed", reason: NO_LAST_ROUTE }]);
    expect(fake.sent).toEqual([]);
  });

  it("a route and context that disagree are ambiguous: a failure naming both choices, nothing sent", async () => {
    const { fake, results, send } = setup({
      "agent:main:main": {
        delivery: {
          kind: "external",
          route: { channel: "telegram", target: { to: "4242" } },
          context: { channel: "slack", to: "C0123" },
        },
      },
    });
    send("main");
    await expect.poll(() => results.length).toBe(1);
    expect(results[0]).toMatchObject({ status: "failed" });
    expect(results[0]?.reason).toMatch(/ambiguous.*telegram 4242, slack C0123.*name channel and to/);
    expect(fake.sent).toEqual([]);
  });

  it("an agent turn with the default channel (`last`) delivers its reply there", async () => {
    const fake = fakeOpenClaw({ pluginConfig: intake() });
    fake.sessionEntries.set("agent:main:main", telegram);
    fake.adapters.set("telegram", { sendText: () => ({ ok: true }) });
    fake.waitResult = () => ({ status: "ok", terminalReply: { disposition: "visible", text: "Done." } });
    const post = await serve(fake);
    expect((await post("agent", { message: "ship it" })).status).toBe(202);
    await expect.poll(() => fake.sent).toEqual([{ channel: "telegram", to: "4242", text: "Done." }]);
  });
});

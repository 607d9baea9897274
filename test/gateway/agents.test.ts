/** @module Agent policy and session modes over real HTTP: which agent a request reaches, who may choose it, and what a turn remembers. */
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/issues.js";
import type { HookEventName } from "../../src/events.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, readState } from "./support.js";

const THREE_AGENTS = { agents: { entries: { main: {}, ops: {}, audit: {} } } };

const gateways: GatewayHandle[] = [];
afterAll(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  await cleanupCli();
});

async function start(
  config: Record<string, unknown>,
): Promise<GatewayHandle & { events: Array<{ event: string; payload: any }> }> {
  const dir = makeTempDir();
  const gateway = await startGateway({
    config,
    configDir: dir,
    port: 0,
    stateDir: path.join(dir, "state"),
    logger: silentGatewayLogger,
  });
  gateways.push(gateway);
  const events: Array<{ event: string; payload: any }> = [];
  for (const event of ["session:system-event", "heartbeat:request", "session:agent-turn"] as HookEventName[])
    gateway.bus.on(event, (payload: any) => events.push({ event, payload }));
  return Object.assign(gateway, { events });
}

describe("agent policy: callers may choose an agent", () => {
  let gateway: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    gateway = await start(
      baseConfig(THREE_AGENTS, { allowRequestAgentId: true, allowedAgentIds: ["main", "ops"] }),
    );
  });
  afterEach(() => {
    gateway.events.length = 0;
  });

  it.each([
    ["wake", {}, 200, "main"],
    ["wake", { agentId: "ops" }, 200, "ops"],
    ["agent", { agentId: "OPS" }, 202, "ops"],
    ["agent", {}, 202, "main"],
  ])("/%s %j is answered %i and its events go to %s", async (hook, extra, status, agentId) => {
    const body = hook === "wake" ? { text: "hello", ...extra } : { message: "hello", ...extra };
    const answer = await postJson(`${gateway.url}/hooks/${hook}`, body, AUTH);
    expect(answer.status).toBe(status);
    expect(gateway.events.length).toBeGreaterThan(0);
    for (const { payload } of gateway.events) expect(payload.agentId).toBe(agentId);
  });

  it.each([
    ["wake", { text: "x", agentId: "audit" }, /agent "audit" is not in hooks\.allowedAgentIds/],
    ["agent", { message: "x", agentId: "nobody" }, /no agent "nobody" \(agents: main, ops, audit\)/],
  ])(
    "/%s %j is refused 400 AGENT_ID_NOT_ALLOWED naming the id, and nothing is emitted",
    async (hook, body, message) => {
      const answer = await postJson(`${gateway.url}/hooks/${hook}`, body, AUTH);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        ok: false,
        code: "AGENT_ID_NOT_ALLOWED",
        error: expect.stringMatching(message),
      });
      expect(answer.body.details).toEqual([{ path: "agentId", message: answer.body.error }]);
      expect(gateway.events).toEqual([]);
    },
  );
});

describe("agent policy: the defaults", () => {
  it("a body may not name an agent unless hooks.allowRequestAgentId; naming none is the default agent", async () => {
    const gateway = await start(baseConfig());
    const refused = await postJson(`${gateway.url}/hooks/wake`, { text: "x", agentId: "main" }, AUTH);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "AGENT_ID_NOT_ALLOWED",
      error: expect.stringContaining("hooks.allowRequestAgentId is false"),
    });
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "x" }, AUTH)).status).toBe(200);
    expect(gateway.events.map(({ payload }) => payload.agentId)).toEqual(["main", "main"]);
  });

  it("a request naming no agent is checked as the default agent; a mapping's own agent passes", async () => {
    const gateway = await start(
      baseConfig(THREE_AGENTS, {
        allowedAgentIds: ["ops"],
        mappings: [{ match: { path: "ops" }, action: "wake", agentId: "ops", textTemplate: "{{text}}" }],
      }),
    );
    const refused = await postJson(`${gateway.url}/hooks/wake`, { text: "x" }, AUTH);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('The default agent "main" is not in hooks.allowedAgentIds.');
    expect((await postJson(`${gateway.url}/hooks/ops`, { text: "for ops" }, AUTH)).status).toBe(200);
    expect(gateway.events.map(({ payload }) => payload.agentId)).toEqual(["ops", "ops"]);
  });

  it('allowedAgentIds [] reaches no agent; ["*"] every one', async () => {
    const none = await start(baseConfig(THREE_AGENTS, { allowedAgentIds: [] }));
    expect((await postJson(`${none.url}/hooks/wake`, { text: "x" }, AUTH)).status).toBe(400);
    const all = await start(baseConfig(THREE_AGENTS, { allowedAgentIds: ["*"], allowRequestAgentId: true }));
    expect((await postJson(`${all.url}/hooks/wake`, { text: "x", agentId: "audit" }, AUTH)).status).toBe(200);
  });

  it("a mapping naming an unknown or refused agent, or persistent without a key, stops the start naming the key", async () => {
    const error = await startGateway({
      config: baseConfig(THREE_AGENTS, {
        allowedAgentIds: ["main", "ops"],
        mappings: [
          { match: { path: "a" }, agentId: "nobody", messageTemplate: "x" },
          { match: { path: "b" }, agentId: "audit", messageTemplate: "x" },
          { match: { path: "c" }, sessionMode: "persistent", messageTemplate: "x" },
        ],
      }),
      stateDir: makeTempDir(),
      logger: silentGatewayLogger,
    }).catch((thrown: unknown) => thrown);
    expect(isConfigError(error)).toBe(true);
    expect((error as { issues: unknown[] }).issues).toEqual([
      { path: "hooks.mappings[0].agentId", message: expect.stringContaining('no agent "nobody"') },
      {
        path: "hooks.mappings[1].agentId",
        message: expect.stringContaining('"audit" is not in hooks.allowedAgentIds'),
      },
      {
        path: "hooks.mappings[2].sessionMode",
        message: '"persistent" needs a sessionKey in the mapping or hooks.defaultSessionKey',
      },
    ]);
  });
});

describe("the agent on the record", () => {
  it("the journal keeps each planned event's agent, and the inspector's detail shows it", async () => {
    const gateway = await start(baseConfig(THREE_AGENTS, { allowRequestAgentId: true }));
    const sent = await postJson(`${gateway.url}/hooks/wake`, { text: "for ops", agentId: "ops" }, AUTH);
    expect(sent.status).toBe(200);
    const inspector = gateway.inspectorUrl!;
    const login = await fetch(`${inspector}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: gateway.inspectorKey }),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const requestId = sent.headers.get("x-request-id");
    let row: { id: string } | undefined;
    // The list is fed once the request has been answered and journaled.
    await expect
      .poll(async () => {
        const list = (await (await fetch(`${inspector}/api/requests`, { headers: { cookie } })).json()) as {
          requests: Array<{ id: string; requestId: string }>;
        };
        row = list.requests.find((entry) => entry.requestId === requestId);
        return row !== undefined;
      })
      .toBe(true);
    const answer = await fetch(`${inspector}/api/requests/${row!.id}`, { headers: { cookie } });
    const detail = (await answer.json()) as { events: unknown[] };
    expect(detail.events).toEqual([
      expect.objectContaining({ event: "session:system-event", agentId: "ops" }),
      expect.objectContaining({ event: "heartbeat:request", agentId: "ops" }),
    ]);
  });
});

describe("session modes", () => {
  it("persistent turns of a key continue one conversation; isolated ones of a key remember nothing", async () => {
    const gateway = await start(
      baseConfig(THREE_AGENTS, {
        allowRequestAgentId: true,
        mappings: [
          {
            match: { path: "chat" },
            agentId: "ops",
            sessionMode: "persistent",
            sessionKey: "hook:chat",
            messageTemplate: "{{text}}",
          },
        ],
      }),
    );
    const finished = new Promise<void>((resolve) => {
      let count = 0;
      gateway.bus.on("session:agent-turn-finished", () => {
        if (++count === 4) resolve();
      });
    });
    for (const text of ["first", "second"]) {
      expect((await postJson(`${gateway.url}/hooks/chat`, { text }, AUTH)).status).toBe(202);
    }
    const isolated = [];
    for (const message of ["one", "two"]) {
      const answer = await postJson(`${gateway.url}/hooks/agent`, { message, sessionKey: "hook:same" }, AUTH);
      expect(answer).toMatchObject({ status: 202, body: { sessionKey: "hook:same" } });
      isolated.push(answer.body.runId as string);
    }
    const refused = await postJson(
      `${gateway.url}/hooks/agent`,
      { message: "m", sessionMode: "persistent" },
      AUTH,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/sessionMode "persistent" needs a sessionKey/);
    await finished;
    await gateway.close();
    const chat = readState(gateway.stateDir, (reader) => reader.session("agent:ops:hook:chat"));
    // The echo runner answers with the raw message; the user's turn is stored wrapped.
    const said = (content: string) => (content.includes("first") ? "first" : "second");
    expect(chat.map((entry) => [entry.role, said(entry.content)])).toEqual([
      ["user", "first"],
      ["assistant", "first"],
      ["user", "second"],
      ["assistant", "second"],
    ]);
    expect(readState(gateway.stateDir, (reader) => reader.session("hook:same"))).toEqual([]);
    for (const runId of isolated) {
      const run = readState(gateway.stateDir, (reader) => reader.session(`hook:same:run:${runId}`));
      expect(run.map((entry) => entry.role)).toEqual(["user", "assistant"]);
    }
  });
});

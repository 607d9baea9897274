import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "fields-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
afterEach(async () => host?.close());

async function start(config: Record<string, unknown> = {}, channels?: readonly string[]) {
  const { hooks, ...rest } = config as { hooks?: Record<string, unknown> };
  host = await startTestHost(
    createHooksPlugin(),
    { ...rest, hooks: { enabled: true, token: TOKEN, ...hooks } },
    channels ? { channels } : {},
  );
}

describe("POST /wake fields", () => {
  it.each([
    { body: { text: "hello" }, status: 200, mode: "now", heartbeats: 1 },
    { body: { text: "  padded  " }, status: 200, mode: "now", heartbeats: 1, raw: "padded" },
    { body: { text: "later", mode: "next-heartbeat" }, status: 200, mode: "next-heartbeat", heartbeats: 0 },
    { body: { text: "x", unknown: 1 }, status: 200, mode: "now", heartbeats: 1 },
    { body: {}, status: 400, path: "text" },
    { body: { text: "   " }, status: 400, path: "text" },
    { body: { text: 42 }, status: 400, path: "text" },
    { body: { text: "x", mode: "later" }, status: 400, path: "mode" },
  ])("$body → $status", async ({ body, status, mode, heartbeats, raw, path }) => {
    await start();
    const response = await post(`${host.url}/hooks/wake`, body, AUTH);
    expect(response.status).toBe(status);
    const systemEvents = host.eventsOf("session:system-event");
    if (status !== 200) {
      expect(response.body.code).toBe("INVALID_PAYLOAD");
      expect(response.body.details[0].path).toBe(path);
      expect(systemEvents).toHaveLength(0);
      return;
    }
    expect(response.body).toEqual({ ok: true, mode, eventId: expect.any(String) });
    expect(systemEvents).toHaveLength(1);
    expect(systemEvents[0]).toMatchObject({
      sessionKey: "main",
      untrusted: true,
      eventId: response.body.eventId,
    });
    if (raw) expect(systemEvents[0]!.raw).toBe(raw);
    expect(systemEvents[0]!.text).toContain(systemEvents[0]!.raw);
    expect(systemEvents[0]!.text).toMatch(/EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="Webhook"/);
    const requests = host.eventsOf("heartbeat:request");
    expect(requests).toHaveLength(heartbeats ?? 0);
    if (heartbeats) expect(requests[0]!.reason).toBe("hook:wake");
  });
});

type AgentCase = {
  name: string;
  body: Record<string, unknown>;
  config?: Record<string, unknown>;
  channels?: readonly string[];
  status: number;
  code?: string;
  path?: string;
  turn?: Record<string, unknown>;
};

const AGENT_CASES: AgentCase[] = [
  {
    name: "message only: defaults",
    body: { message: "hi" },
    status: 202,
    turn: { name: "Hook", wakeMode: "now", deliver: true, channel: "last", timeoutSeconds: 600, raw: "hi" },
  },
  { name: "message missing", body: {}, status: 400, code: "INVALID_PAYLOAD", path: "message" },
  { name: "message blank", body: { message: " \n " }, status: 400, code: "INVALID_PAYLOAD", path: "message" },
  {
    name: "name sets the summary prefix",
    body: { message: "m", name: "GitHub" },
    status: 202,
    turn: { name: "GitHub" },
  },
  {
    name: "caller session key with the prefix",
    body: { message: "m", sessionKey: "hook:build-42" },
    status: 202,
    turn: { sessionKey: "hook:build-42" },
  },
  {
    name: "prefix is case-insensitive",
    body: { message: "m", sessionKey: "HOOK:Build" },
    status: 202,
    turn: { sessionKey: "HOOK:Build" },
  },
  {
    name: "session key without the prefix",
    body: { message: "m", sessionKey: "agent:x" },
    status: 400,
    code: "SESSION_KEY_NOT_ALLOWED",
  },
  {
    name: "the main session is never a target",
    body: { message: "m", sessionKey: "main" },
    config: { hooks: { allowedSessionKeyPrefixes: [] } },
    status: 400,
    code: "SESSION_KEY_NOT_ALLOWED",
  },
  {
    name: "a key naming an agent, even with any prefix allowed: the agent is chosen by agentId only",
    body: { message: "m", sessionKey: "agent:research:hook:x" },
    config: { hooks: { allowedSessionKeyPrefixes: [] } },
    status: 400,
    code: "SESSION_KEY_NOT_ALLOWED",
  },
  {
    name: "any prefix when prefixes are []",
    body: { message: "m", sessionKey: "team:x" },
    config: { hooks: { allowedSessionKeyPrefixes: [] } },
    status: 202,
    turn: { sessionKey: "team:x" },
  },
  {
    name: "caller keys turned off",
    body: { message: "m", sessionKey: "hook:x" },
    config: { hooks: { allowRequestSessionKey: false } },
    status: 400,
    code: "SESSION_KEY_NOT_ALLOWED",
  },
  {
    name: "defaultSessionKey when none is given",
    body: { message: "m" },
    config: { hooks: { defaultSessionKey: "hook:inbox" } },
    status: 202,
    turn: { sessionKey: "hook:inbox" },
  },
  {
    name: "wakeMode next-heartbeat",
    body: { message: "m", wakeMode: "next-heartbeat" },
    status: 202,
    turn: { wakeMode: "next-heartbeat" },
  },
  {
    name: "wakeMode invalid",
    body: { message: "m", wakeMode: "soon" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "wakeMode",
  },
  { name: "deliver false", body: { message: "m", deliver: false }, status: 202, turn: { deliver: false } },
  {
    name: "deliver not a boolean",
    body: { message: "m", deliver: "yes" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "deliver",
  },
  {
    name: "channel sms is not offered",
    body: { message: "m", channel: "sms" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "channel",
  },
  {
    name: "alias imsg → imessage",
    body: { message: "m", channel: "imsg", to: "someone@example.com" },
    status: 202,
    turn: { channel: "imessage", to: "someone@example.com" },
  },
  {
    name: "alias teams → msteams",
    body: { message: "m", channel: "teams", to: "19:abc@thread.tacv2" },
    status: 202,
    turn: { channel: "msteams" },
  },
  {
    name: "mattermost only when the host offers it",
    body: { message: "m", channel: "mattermost" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "channel",
  },
  {
    name: "mattermost offered by the host",
    body: { message: "m", channel: "mattermost", to: "abcdefghijklmnopqrstuvwxyz" },
    channels: ["whatsapp", "mattermost"],
    status: 202,
    turn: { channel: "mattermost" },
  },
  {
    name: "a channel the host does not offer",
    body: { message: "m", channel: "slack" },
    channels: ["whatsapp"],
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "channel",
  },
  {
    name: "whatsapp wants E.164",
    body: { message: "m", channel: "whatsapp", to: "+15551234567" },
    status: 202,
    turn: { to: "+15551234567" },
  },
  {
    name: "whatsapp refuses a bare number",
    body: { message: "m", channel: "whatsapp", to: "5551234" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  {
    name: "signal refuses an e-mail",
    body: { message: "m", channel: "signal", to: "a@b.co" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  { name: "telegram @name", body: { message: "m", channel: "telegram", to: "@team_bot" }, status: 202 },
  {
    name: "telegram negative chat id",
    body: { message: "m", channel: "telegram", to: "-1001234567890" },
    status: 202,
  },
  {
    name: "telegram refuses words",
    body: { message: "m", channel: "telegram", to: "general" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  {
    name: "discord snowflake",
    body: { message: "m", channel: "discord", to: "123456789012345678" },
    status: 202,
  },
  {
    name: "discord refuses a name",
    body: { message: "m", channel: "discord", to: "#general" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  { name: "slack channel id", body: { message: "m", channel: "slack", to: "C0123456789" }, status: 202 },
  {
    name: "slack refuses #name",
    body: { message: "m", channel: "slack", to: "#general" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  {
    name: "msteams refuses an e-mail",
    body: { message: "m", channel: "msteams", to: "a@b.co" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "to",
  },
  {
    name: "model ref without an allow-list",
    body: { message: "m", model: "openai/gpt-5" },
    status: 202,
    turn: { model: "openai/gpt-5" },
  },
  {
    name: "bare model name without an allow-list",
    body: { message: "m", model: "gpt" },
    status: 400,
    code: "MODEL_NOT_ALLOWED",
    path: "model",
  },
  {
    name: "allowed model",
    body: { message: "m", model: "anthropic/claude-x" },
    config: { agents: { defaults: { models: ["anthropic/claude-x"] } } },
    status: 202,
    turn: { model: "anthropic/claude-x" },
  },
  {
    name: "model outside the allow-list",
    body: { message: "m", model: "openai/gpt-5" },
    config: { agents: { defaults: { models: ["anthropic/claude-x"] } } },
    status: 400,
    code: "MODEL_NOT_ALLOWED",
  },
  {
    name: "alias resolves to its ref",
    body: { message: "m", model: "fast" },
    config: { agents: { defaults: { models: { "local/qwen": { alias: "fast" } } } } },
    status: 202,
    turn: { model: "local/qwen" },
  },
  {
    name: "thinking level",
    body: { message: "m", thinking: "xhigh" },
    status: 202,
    turn: { thinking: "xhigh" },
  },
  {
    name: "thinking unknown",
    body: { message: "m", thinking: "max" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "thinking",
  },
  {
    name: "timeoutSeconds floored",
    body: { message: "m", timeoutSeconds: 30.9 },
    status: 202,
    turn: { timeoutSeconds: 30 },
  },
  {
    name: "timeoutSeconds at the maximum",
    body: { message: "m", timeoutSeconds: 86400 },
    status: 202,
    turn: { timeoutSeconds: 86400 },
  },
  {
    name: "timeoutSeconds over the maximum",
    body: { message: "m", timeoutSeconds: 86401 },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "timeoutSeconds",
  },
  {
    name: "timeoutSeconds zero",
    body: { message: "m", timeoutSeconds: 0 },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "timeoutSeconds",
  },
  {
    name: "timeoutSeconds negative",
    body: { message: "m", timeoutSeconds: -5 },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "timeoutSeconds",
  },
  {
    name: "timeoutSeconds as a string",
    body: { message: "m", timeoutSeconds: "30" },
    status: 400,
    code: "INVALID_PAYLOAD",
    path: "timeoutSeconds",
  },
  { name: "unknown fields are ignored", body: { message: "m", colour: "blue" }, status: 202 },
];

describe("POST /agent fields", () => {
  it.each(AGENT_CASES)("$name → $status", async ({ body, config, channels, status, code, path, turn }) => {
    await start(config, channels);
    const response = await post(`${host.url}/hooks/agent`, body, AUTH);
    expect(response.status).toBe(status);
    const turns = host.eventsOf("session:agent-turn");
    if (status !== 202) {
      expect(response.body).toMatchObject({ ok: false, code });
      if (path) expect(response.body.details.map((d: { path: string }) => d.path)).toContain(path);
      expect(turns).toHaveLength(0);
      expect(host.events.filter((e) => e.event !== "hooks:request")).toHaveLength(0);
      return;
    }
    expect(response.body).toEqual({ ok: true, runId: expect.any(String), sessionKey: expect.any(String) });
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      runId: response.body.runId,
      sessionKey: response.body.sessionKey,
      untrusted: true,
      ...turn,
    });
    if (!("sessionKey" in body) && !config) expect(response.body.sessionKey).toMatch(/^hook:[0-9a-f-]{36}$/);
    expect(turns[0]!.message).toContain(turns[0]!.raw);
    expect(turns[0]!.message).not.toBe(turns[0]!.raw);
  });
});

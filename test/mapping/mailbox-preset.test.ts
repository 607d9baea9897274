import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "mailbox-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
afterEach(async () => host?.close());

const start = (hooks: Record<string, unknown> = {}) =>
  startTestHost(createHooksPlugin(), {
    hooks: { enabled: true, token: TOKEN, presets: ["mailbox"], ...hooks },
  }).then((h) => {
    host = h;
  });

const message = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  from: `${id}@example.com`,
  subject: `Subject ${id}`,
  snippet: `Snippet ${id}`,
  ...extra,
});

describe("mailbox preset", () => {
  it("makes one agent turn per message, keyed by message id, wrapped as Email", async () => {
    await start();
    const response = await post(
      `${host.url}/hooks/mailbox`,
      { source: "mailbox", messages: [message("m1", { body: "Hello body" }), message("m2")] },
      AUTH,
    );
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      ok: true,
      mappingId: "mailbox",
      runIds: [expect.any(String), expect.any(String)],
    });
    const turns = host.eventsOf("session:agent-turn");
    expect(turns.map((t) => t.sessionKey)).toEqual(["hook:mailbox:m1", "hook:mailbox:m2"]);
    expect(turns[0]).toMatchObject({
      name: "Mailbox",
      wakeMode: "now",
      raw: "New email from m1@example.com\nSubject: Subject m1\nSnippet m1\nHello body",
    });
    expect(turns[0]!.message).toContain('source="Email"');
    expect(turns[1]!.raw).toBe("New email from m2@example.com\nSubject: Subject m2\nSnippet m2");
  });

  it.each([
    [
      { source: "mailbox", messages: [message("a"), { id: "b", subject: "s", snippet: "x" }] },
      "messages[1].from",
    ],
    [{ source: "mailbox", messages: "nope" }, "messages"],
    [{ messages: [message("a")] }, "source"],
    [{ source: "mailbox", messages: [message("a", { body: 5 })] }, "messages[0].body"],
  ])("refuses a malformed batch with the offending path (%#)", async (body, pathName) => {
    await start();
    const response = await post(`${host.url}/hooks/mailbox`, body, AUTH);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("INVALID_PAYLOAD");
    expect(response.body.details.map((d: { path: string }) => d.path)).toContain(pathName);
    expect(host.eventsOf("session:agent-turn")).toHaveLength(0);
  });

  it("keys sessions by message id even when callers may not choose keys, and gives id-less mail a fresh key", async () => {
    await start({ allowRequestSessionKey: false });
    const response = await post(
      `${host.url}/hooks/mailbox`,
      {
        source: "mailbox",
        messages: [
          message("m9"),
          { from: "x@example.com", subject: "s", snippet: "no id" },
          { from: "y@example.com", subject: "t", snippet: "no id either" },
        ],
      },
      AUTH,
    );
    expect(response.status).toBe(202);
    const keys = host.eventsOf("session:agent-turn").map((t) => t.sessionKey);
    expect(keys[0]).toBe("hook:mailbox:m9");
    expect(keys[1]).toMatch(/^hook:[0-9a-f-]{36}$/);
    expect(keys[2]).toMatch(/^hook:[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[2]);
  });

  it("takes model, thinking and the unsafe flag from hooks.mailbox", async () => {
    await start({ mailbox: { model: "local/qwen", thinking: "low", allowUnsafeExternalContent: true } });
    await post(`${host.url}/hooks/mailbox`, { source: "mailbox", messages: [message("x")] }, AUTH);
    expect(host.eventsOf("session:agent-turn")[0]).toMatchObject({
      model: "local/qwen",
      thinking: "low",
      untrusted: false,
    });
  });

  it("lets a user mapping on mailbox win over the preset", async () => {
    await start({
      mappings: [{ id: "mine", match: { path: "mailbox" }, action: "wake", textTemplate: "mail!" }],
    });
    const response = await post(`${host.url}/hooks/mailbox`, { anything: true }, AUTH);
    expect(response.body).toMatchObject({ mappingId: "mine", mode: "now" });
  });

  it("accepts a full batch larger than hooks.maxBodyBytes, sized from hooks.mailbox.maxBytes", async () => {
    await start({ maxBodyBytes: 65536, mailbox: { maxBytes: 20000 } });
    const messages = Array.from({ length: 40 }, (_, i) => message(`big${i}`, { body: "b".repeat(19_000) }));
    const response = await post(`${host.url}/hooks/mailbox`, { source: "mailbox", messages }, AUTH);
    expect(response.status).toBe(202);
    expect(response.body.runIds).toHaveLength(40);
    // Four start at once (maxConcurrentTurns), the rest as they end.
    expect(response.body.queued).toBe(true);
    expect(host.eventsOf("session:agent-turn")).toHaveLength(4);
    // Other hooks keep the global limit.
    expect((await post(`${host.url}/hooks/wake`, { text: "w".repeat(70_000) }, AUTH)).status).toBe(413);
  });
});

/** @module `hooks.maxTextChars` over real HTTP: a direct text and a rendered template longer than the limit reach the session cut there, marked, and still wrapped whole. */
import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "text-cap-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

const LIMIT = 1_000;
const MARK = (cut: number) =>
  `\n[${cut} more characters cut: the text is longer than hooks.maxTextChars (${LIMIT})]`;

async function start(): Promise<TestHost> {
  host = await startTestHost(createHooksPlugin(), {
    hooks: {
      enabled: true,
      token: TOKEN,
      maxTextChars: LIMIT,
      mappings: [{ id: "big", match: { path: "big" }, action: "agent", messageTemplate: "Item: {{text}}" }],
    },
  });
  return host;
}

describe("hooks.maxTextChars", () => {
  it("cuts a wake's text at the limit and says how much was cut; the wrapper closes after the mark", async () => {
    const gateway = await start();
    const text = "a".repeat(LIMIT + 4_321);
    expect((await post(`${gateway.url}/hooks/wake`, { text }, AUTH)).status).toBe(200);
    const [event] = gateway.eventsOf("session:system-event");
    expect(event!.raw).toBe(`${"a".repeat(LIMIT)}${MARK(4_321)}`);
    expect(event!.text).toContain(`${MARK(4_321)}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="`);
    expect(event!.text.length).toBeLessThan(LIMIT + 1_000);
  });

  it("cuts a rendered template the same way, and never between the halves of a surrogate pair", async () => {
    const gateway = await start();
    // "Item: " is 6 characters: the 997th character of the text starts a pair at the 1000th of the rendering.
    const text = `${"b".repeat(LIMIT - 7)}😀${"c".repeat(5_000)}`;
    expect((await post(`${gateway.url}/hooks/big`, { text }, AUTH)).status).toBe(202);
    const [turn] = gateway.eventsOf("session:agent-turn");
    const rendered = `Item: ${text}`;
    expect(turn!.raw).toBe(`${rendered.slice(0, LIMIT - 1)}${MARK(rendered.length - (LIMIT - 1))}`);
    expect(turn!.message).toContain(MARK(rendered.length - (LIMIT - 1)));
  });

  it("leaves a text at the limit as it is", async () => {
    const gateway = await start();
    const text = "d".repeat(LIMIT);
    expect((await post(`${gateway.url}/hooks/wake`, { text }, AUTH)).status).toBe(200);
    expect(gateway.eventsOf("session:system-event")[0]!.raw).toBe(text);
  });
});

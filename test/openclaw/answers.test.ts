/** @module Inside OpenClaw (on the stand-in of its API), wake answers carry eventOutcome and completion answers replyDisposition, over real HTTP. */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { servePlugin } from "../helpers/openclaw-plugin-server.js";

const TOKEN = "oc-test-token-0123456789abcdef0123";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serve(fake: FakeOpenClaw) {
  const server = await servePlugin(fake);
  cleanups.push(server.stop);
  return async (hook: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}/intake/${hook}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
}

const config = (extra: Record<string, unknown> = {}) => ({
  pluginConfig: { enabled: true, token: TOKEN, path: "/intake", ...extra },
});

describe("OpenClaw adapter: eventOutcome", () => {
  it("a burst of wakes is answered queued, then coalesced into the batch waiting in OpenClaw's queue, then queued again after a heartbeat drained it", async () => {
    const fake = fakeOpenClaw(config());
    const post = await serve(fake);
    const answers = [];
    for (let i = 1; i <= 3; i++)
      answers.push(await post("wake", { text: `build ${i}`, mode: "next-heartbeat" }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.body.eventOutcome)).toEqual(["queued", "coalesced", "coalesced"]);
    expect(answers[0]!.body).toEqual({
      ok: true,
      mode: "next-heartbeat",
      eventId: expect.any(String),
      eventOutcome: "queued",
    });
    expect(fake.queue.drain("agent:main:main")).toHaveLength(1);
    expect((await post("wake", { text: "after the heartbeat" })).body.eventOutcome).toBe("queued");
  });

  it("a repeated delivery id gets the first answer again, eventOutcome included", async () => {
    const fake = fakeOpenClaw(config());
    const post = await serve(fake);
    const key = { "idempotency-key": "deploy-42" };
    const first = await post("wake", { text: "Deployed", mode: "next-heartbeat" }, key);
    await post("wake", { text: "something else", mode: "next-heartbeat" });
    const again = await post("wake", { text: "Deployed", mode: "next-heartbeat" }, key);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(first.body.eventOutcome).toBe("queued");
  });

  it("a mapped wake says it too", async () => {
    const fake = fakeOpenClaw(
      config({ mappings: [{ id: "ping", match: { path: "ping" }, action: "wake", textTemplate: "ping" }] }),
    );
    const post = await serve(fake);
    expect((await post("ping", {})).body).toEqual({
      ok: true,
      mode: "now",
      mappingId: "ping",
      eventOutcome: "queued",
    });
  });
});

describe("OpenClaw adapter: replyDisposition", () => {
  it.each([
    [{ disposition: "visible", text: "All green." }, "visible", "visible"],
    [{ disposition: "silent" }, "silent", "silent"],
    [{ disposition: "empty" }, "none", "empty"],
  ] as const)(
    "a terminal reply %j is answered reply %s, replyDisposition %s, without its text",
    async (terminalReply, reply, replyDisposition) => {
      const fake = fakeOpenClaw(config());
      fake.waitResult = () => ({ status: "ok", terminalReply });
      const post = await serve(fake);
      const answer = await post("agent", { message: "check", deliver: false, waitForCompletion: true });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        ok: true,
        runId: expect.any(String),
        sessionKey: expect.any(String),
        status: "ok",
        reply,
        replyDisposition,
        delivered: false,
      });
    },
  );
});

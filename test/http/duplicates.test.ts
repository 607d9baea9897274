/** @module Duplicate deliveries over real HTTP: the first answer again with Idempotent-Replay, no second event, exactly one of many at once. */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import type { DeliveryClaim, Store } from "../../src/store/store.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "duplicates-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
let host: TestHost;
afterEach(async () => host?.close());

async function start(hooks: Record<string, unknown> = {}) {
  host = await startTestHost(
    createHooksPlugin(),
    { hooks: { enabled: true, token: TOKEN, ...hooks } },
    { configDir: REPO_ROOT },
  );
}

async function send(path: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${host.url}/hooks/${path}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const requestId = response.headers.get("x-request-id")!;
  // The request's own hooks:request event is its last: everything it caused has been emitted by then.
  await host.waitForEvent("hooks:request", (event) => event.source.requestId === requestId);
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe("Idempotency-Key on any hook", () => {
  it("a second /wake with the same key gets the first answer, marked, and queues nothing", async () => {
    await start();
    const headers = { ...AUTH, "idempotency-key": "order-1234" };
    const first = await send("wake", { text: "once" }, headers);
    const second = await send("wake", { text: "once" }, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replay")).toBe("true");
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
    expect(host.eventsOf("heartbeat:request")).toHaveLength(1);
  });

  it("the same key on another hook, or another key, is a new delivery", async () => {
    await start();
    await send("wake", { text: "a" }, { ...AUTH, "idempotency-key": "k" });
    await send("agent", { message: "b" }, { ...AUTH, "idempotency-key": "k" });
    await send("wake", { text: "c" }, { ...AUTH, "idempotency-key": "k2" });
    expect(host.eventsOf("session:system-event")).toHaveLength(2);
    expect(host.eventsOf("session:agent-turn")).toHaveLength(1);
  });

  it("a refused request does not use up its key: the corrected retry is accepted", async () => {
    await start();
    const headers = { ...AUTH, "idempotency-key": "retry-me" };
    expect((await send("wake", { text: "" }, headers)).status).toBe(400);
    const retried = await send("wake", { text: "fixed" }, headers);
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replay")).toBeNull();
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
  });

  it.each([
    ["empty", "   "],
    ["too long", "x".repeat(257)],
    ["not printable", "tab\there"],
  ])("a malformed key (%s) is a 400 that says what a key must be", async (_name, key) => {
    await start();
    const response = await send("wake", { text: "x" }, { ...AUTH, "idempotency-key": key });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/Idempotency-Key/);
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
  });

  it("50 simultaneous deliveries with one id: exactly one event, and all 50 get the same answer", async () => {
    await start();
    const headers = { ...AUTH, "idempotency-key": "burst" };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send("wake", { text: "burst" }, headers)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    expect(new Set(answers.map((answer) => answer.body.eventId)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replay") === null)).toHaveLength(1);
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
  });

  it("keeps at most hooks.dedupe.maxEntries ids, the oldest going first", async () => {
    await start({ dedupe: { windowSeconds: 86_400, maxEntries: 2 } });
    for (const key of ["a", "b", "c"]) await send("wake", { text: key }, { ...AUTH, "idempotency-key": key });
    // "a" was the oldest of three with room for two: a new delivery again.
    const again = await send("wake", { text: "a" }, { ...AUTH, "idempotency-key": "a" });
    expect(again.headers.get("idempotent-replay")).toBeNull();
    const kept = await send("wake", { text: "c" }, { ...AUTH, "idempotency-key": "c" });
    expect(kept.headers.get("idempotent-replay")).toBe("true");
    expect(host.eventsOf("session:system-event")).toHaveLength(4);
  });
});

describe("a store that cannot settle the question", () => {
  const storeAnswering = (claim: () => Promise<DeliveryClaim>): Store => ({
    increment: async (_key, windowMs) => ({ count: 1, resetAt: Date.now() + windowMs }),
    peek: async () => undefined,
    reset: async () => undefined,
    claimDelivery: claim,
    settleDelivery: async () => undefined,
    rememberDeliveries: async () => 0,
    close: async () => undefined,
  });

  it.each([
    [
      "an earlier request with the id is still running",
      async (): Promise<DeliveryClaim> => ({ state: "in-progress" }),
      409,
      "DUPLICATE_IN_PROGRESS",
    ],
    [
      "the store is unreachable",
      async (): Promise<DeliveryClaim> => {
        throw new Error("connection refused");
      },
      503,
      "UNAVAILABLE",
    ],
  ] as const)(
    "%s: refused with Retry-After and nothing emitted, never accepted twice",
    async (_name, claim, status, code) => {
      host = await startTestHost(
        createHooksPlugin({ store: storeAnswering(claim) }),
        { hooks: { enabled: true, token: TOKEN } },
        { configDir: REPO_ROOT },
      );
      const response = await send("wake", { text: "x" }, { ...AUTH, "idempotency-key": "k" });
      expect(response.status).toBe(status);
      expect(response.body.code).toBe(code);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(host.eventsOf("session:system-event")).toHaveLength(0);
    },
  );
});

describe("the sender's own delivery id", () => {
  it("a GitHub redelivery (same X-GitHub-Delivery) is answered again without a second turn", async () => {
    const secret = "github-dedupe-secret";
    await start({
      mappings: [
        {
          id: "gh",
          match: { path: "github", headers: { "x-github-event": "pull_request" } },
          messageTemplate: "PR {{number}}",
          verify: { scheme: "github", secret },
        },
      ],
    });
    const body = JSON.stringify({ number: 7 });
    const headers = {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    };
    const first = await send("github", body, headers);
    const redelivered = await send("github", body, headers);
    expect(first.status).toBe(202);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.runId).toBe(first.body.runId);
    expect(redelivered.headers.get("idempotent-replay")).toBe("true");
    expect(host.eventsOf("session:agent-turn")).toHaveLength(1);
  });
});

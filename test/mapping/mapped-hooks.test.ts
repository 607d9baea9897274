import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createHooksPlugin } from "../../src/index.js";
import { headFor, rawRequest } from "../helpers/raw-http.js";
import { REPO_ROOT, readPayload } from "../helpers/repo.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "mapping-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
afterEach(async () => host?.close());

async function start(mappings: MappingInput[], hooks: Record<string, unknown> = {}) {
  host = await startTestHost(
    createHooksPlugin(),
    { hooks: { enabled: true, token: TOKEN, mappings, ...hooks } },
    { configDir: REPO_ROOT },
  );
}
const hook = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  post(`${host.url}/hooks/${name}`, body, { ...AUTH, ...headers });

describe("mapped hooks", () => {
  it("an agent mapping renders its templates into the turn", async () => {
    await start([
      {
        id: "github-push",
        match: { path: "github/push" },
        name: "GitHub {{ repository.name }}",
        sessionKey: "hook:github:{{ repository.full_name }}",
        messageTemplate:
          "{{ pusher.name }} pushed {{ commits[0].message }} to {{ ref }} ({{ headers.x-github-event }})",
        to: "  {{ payload.nothing }}  ",
        channel: "telegram",
        deliver: false,
        timeoutSeconds: 120,
      },
    ]);
    const payload = readPayload("github/push.json");
    const response = await hook("github/push", payload, { "x-github-event": "push" });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      ok: true,
      runId: expect.any(String),
      sessionKey: "hook:github:Codertocat/Hello-World",
      mappingId: "github-push",
    });
    const [turn] = host.eventsOf("session:agent-turn");
    expect(turn).toMatchObject({
      name: "GitHub Hello-World",
      raw: "Codertocat pushed Initial commit to refs/heads/master (push)",
      channel: "telegram",
      deliver: false,
      timeoutSeconds: 120,
      source: { hook: "github/push", mappingId: "github-push" },
    });
    // An empty rendered `to` means unset.
    expect(turn).not.toHaveProperty("to");
  });

  it("a wake mapping answers 200 with mode and mappingId", async () => {
    await start([
      {
        match: { path: "alerts" },
        action: "wake",
        wakeMode: "next-heartbeat",
        textTemplate: "Alert: {{ title }}",
      },
    ]);
    const response = await hook("alerts", { title: "disk full" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, mode: "next-heartbeat", mappingId: "mapping-0" });
    expect(host.eventsOf("session:system-event")[0]).toMatchObject({
      raw: "Alert: disk full",
      untrusted: true,
    });
    expect(host.eventsOf("heartbeat:request")).toHaveLength(0);
  });

  it("matches path exactly and case-sensitively, with outer slashes trimmed", async () => {
    await start([{ match: { path: "/github/push/" }, messageTemplate: "x" }]);
    expect((await hook("github/push", {})).status).toBe(202);
    expect((await hook("github/push/", {})).status).toBe(202);
    expect((await hook("GitHub/push", {})).status).toBe(404);
    expect((await hook("github", {})).status).toBe(404);
  });

  it.each([
    "authorization",
    "proxy-authorization",
    "x-service-token",
    "x-openclaw-token",
    "x-forwarded-authorization",
    "cookie",
    "x-gitlab-token",
    "x-api-key",
  ])("never renders the credential header %s into a message", async (name) => {
    await start([
      {
        match: { path: "leak" },
        action: "wake",
        textTemplate: `[{{headers.${name}}}] [{{headers.x-custom}}]`,
      },
    ]);
    const secret = "secret-credential-value-0123456789";
    const headers: Record<string, string> = { "x-custom": "visible" };
    if (name !== "authorization") headers[name] = secret;
    const response = await hook("leak", {}, headers);
    expect(response.status).toBe(200);
    const event = host.eventsOf("session:system-event")[0]!;
    expect(event.raw).toBe("[] [visible]");
    expect(JSON.stringify(host.events)).not.toContain(secret);
    expect(JSON.stringify(host.events)).not.toContain(TOKEN);
  });

  it("routes a generic path by the payload's source", async () => {
    await start([
      { id: "stripe", match: { source: "stripe" }, messageTemplate: "stripe {{ type }}" },
      { id: "sentry", match: { source: "sentry" }, action: "wake", textTemplate: "sentry {{ title }}" },
    ]);
    expect((await hook("ingest", { source: "sentry", title: "boom" })).body).toMatchObject({
      mappingId: "sentry",
      mode: "now",
    });
    expect((await hook("ingest", { source: "stripe", type: "invoice.paid" })).body).toMatchObject({
      mappingId: "stripe",
    });
    const none = await hook("ingest", { source: "other" });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe("NOT_FOUND");
  });

  it("the first match owns the request, even if it then fails", async () => {
    await start(
      [
        { id: "first", match: { path: "x" }, transform: { module: "broken/error-runtime.ts" } },
        { id: "second", match: { path: "x" }, messageTemplate: "never used" },
      ],
      { transformsDir: "fixtures/transforms" },
    );
    const response = await hook("x", {});
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ ok: false, code: "MAPPING_FAILED", error: expect.any(String) });
    expect(host.eventsOf("session:agent-turn")).toHaveLength(0);
    expect(host.eventsOf("hooks:request")[0]).toMatchObject({ status: 500, mappingId: "first" });
  });

  it("user mappings keep their order with path-less mappings in between", async () => {
    await start([
      { id: "only-stripe", match: { source: "stripe" }, messageTemplate: "s" },
      { id: "exact", match: { path: "orders" }, messageTemplate: "o" },
      { id: "catch-all", messageTemplate: "c" },
    ]);
    expect((await hook("orders", { source: "stripe" })).body.mappingId).toBe("only-stripe");
    expect((await hook("orders", {})).body.mappingId).toBe("exact");
    expect((await hook("anything/else", {})).body.mappingId).toBe("catch-all");
  });

  it("never lets a mapping take wake or agent", async () => {
    await start([{ id: "catch-all", action: "wake", textTemplate: "caught" }]);
    const response = await hook("wake", { text: "direct" });
    expect(response.body).toEqual({ ok: true, mode: "now", eventId: expect.any(String) });
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe("direct");
  });

  it("answers 404 before reading the body when no mapping can claim the name", async () => {
    await start([{ match: { path: "known" }, messageTemplate: "x" }]);
    const response = await rawRequest(
      host.url,
      headFor("/hooks/unknown", {
        Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json",
        "Content-Length": String(10 * 1024 ** 3),
      }),
    );
    expect(response.status).toBe(404);
  });

  it("needs non-empty text or message in the final action", async () => {
    await start([
      { match: { path: "w" }, action: "wake", textTemplate: "{{ missing }}" },
      { match: { path: "a" }, messageTemplate: "   " },
      { match: { path: "k" }, messageTemplate: "m", sessionKey: "{{ missing }}" },
    ]);
    for (const name of ["w", "a", "k"]) {
      const response = await hook(name, {});
      expect(response.status, name).toBe(400);
      expect(response.body.code).toBe("INVALID_PAYLOAD");
    }
    expect(host.eventsOf("session:agent-turn")).toHaveLength(0);
  });

  it("applies the session-key policy to payload-derived keys but lets a fixed operator key through", async () => {
    await start(
      [
        { match: { path: "derived" }, messageTemplate: "m", sessionKey: "hook:{{ id }}" },
        { match: { path: "fixed" }, messageTemplate: "m", sessionKey: "hook:fixed" },
        { match: { path: "bad-prefix" }, messageTemplate: "m", sessionKey: "{{ id }}" },
      ],
      { allowRequestSessionKey: false },
    );
    expect((await hook("derived", { id: "1" })).body.code).toBe("SESSION_KEY_NOT_ALLOWED");
    expect((await hook("fixed", {})).body.sessionKey).toBe("hook:fixed");
    expect((await hook("bad-prefix", { id: "main" })).body.code).toBe("SESSION_KEY_NOT_ALLOWED");
  });

  it("validates model and thinking templates like a direct request", async () => {
    await start(
      [{ match: { path: "m" }, messageTemplate: "m", model: "{{ model }}", thinking: "{{ level }}" }],
      {},
    );
    expect((await hook("m", { model: "openai/gpt-5", level: "low" })).status).toBe(202);
    expect(host.eventsOf("session:agent-turn")[0]).toMatchObject({ model: "openai/gpt-5", thinking: "low" });
    expect((await hook("m", { model: "bare" })).body.code).toBe("MODEL_NOT_ALLOWED");
    expect((await hook("m", { level: "max" })).body.code).toBe("INVALID_PAYLOAD");
  });

  it("fans out over forEach, one action per item with the array replaced by [item]", async () => {
    await start([
      {
        id: "batch",
        match: { path: "batch" },
        forEach: "items",
        sessionKey: "hook:item:{{ items[0].id }}",
        messageTemplate: "{{ items[0].text }} of {{ total }}",
      },
    ]);
    const response = await hook("batch", {
      total: 3,
      items: [
        { id: "a", text: "one" },
        { id: "b", text: "two" },
        { id: "c", text: "three" },
      ],
    });
    expect(response.status).toBe(202);
    const turns = host.eventsOf("session:agent-turn");
    expect(turns.map((t) => [t.sessionKey, t.raw])).toEqual([
      ["hook:item:a", "one of 3"],
      ["hook:item:b", "two of 3"],
      ["hook:item:c", "three of 3"],
    ]);
    expect(response.body.runIds).toEqual(turns.map((t) => t.runId));
    expect(response.body.runId).toBe(turns[0]!.runId);
  });

  it.each([{ items: [] }, {}, { items: "not an array" }])(
    "answers 204 with no body when forEach has nothing: %j",
    async (body) => {
      await start([{ match: { path: "batch" }, forEach: "items", messageTemplate: "x" }]);
      const response = await fetch(`${host.url}/hooks/batch`, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(204);
      expect(await response.text()).toBe("");
      expect(host.eventsOf("session:agent-turn")).toHaveLength(0);
    },
  );

  it("caps forEach at 200 items and warns about the rest", async () => {
    await start([
      {
        match: { path: "batch" },
        forEach: "items",
        action: "wake",
        wakeMode: "next-heartbeat",
        textTemplate: "{{ items[0] }}",
      },
    ]);
    const response = await hook("batch", { items: Array.from({ length: 250 }, (_, i) => i) });
    expect(response.status).toBe(200);
    expect(host.eventsOf("session:system-event")).toHaveLength(200);
    expect(host.logs.some((l) => l.level === "warn" && /250 items/.test(l.message))).toBe(true);
  });

  it("lets a mapping raise the body limit for its own path only", async () => {
    await start(
      [
        { match: { path: "big" }, maxBodyBytes: 8192, messageTemplate: "{{ blob }}" },
        { match: { path: "small" }, messageTemplate: "{{ blob }}" },
      ],
      { maxBodyBytes: 1024 },
    );
    const blob = "z".repeat(4000);
    expect((await hook("big", { blob })).status).toBe(202);
    expect((await hook("small", { blob })).status).toBe(413);
  });

  it("holds the winning mapping to its own limit even when a catch-all allows more", async () => {
    await start(
      [
        { match: { path: "small" }, messageTemplate: "{{ blob }}" },
        { id: "big-catch-all", maxBodyBytes: 65536, messageTemplate: "{{ blob }}" },
      ],
      { maxBodyBytes: 1024 },
    );
    const blob = "z".repeat(4000);
    const small = await hook("small", { blob });
    expect(small.status).toBe(413);
    expect(small.body.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await hook("anything", { blob })).status).toBe(202);
  });

  it("accepts form-encoded bodies for mappings", async () => {
    await start([{ match: { path: "form" }, action: "wake", textTemplate: "{{ name }} likes {{ colour }}" }]);
    const response = await post(`${host.url}/hooks/form`, "name=Ada&colour=red&colour=blue", {
      ...AUTH,
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(200);
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe('Ada likes ["red","blue"]');
  });

  it("turns the wrapper off only for a mapping that allows unsafe external content", async () => {
    await start([
      { match: { path: "raw" }, messageTemplate: "{{ m }}", allowUnsafeExternalContent: true },
      { match: { path: "safe" }, messageTemplate: "{{ m }}" },
    ]);
    await hook("raw", { m: "trusted text" });
    await hook("safe", { m: "untrusted text" });
    const [raw, safe] = host.eventsOf("session:agent-turn");
    expect(raw).toMatchObject({ message: "trusted text", raw: "trusted text", untrusted: false });
    expect(safe!.untrusted).toBe(true);
    expect(safe!.message).toContain('source="Webhook"');
  });

  it("resolves the last of 10,000 mappings correctly", async () => {
    const mappings: MappingInput[] = Array.from({ length: 10_000 }, (_, i) => ({
      id: `m${i}`,
      match: { path: `svc/${i}` },
      action: "wake",
      textTemplate: `hit ${i} {{ v }}`,
    }));
    await start(mappings);
    const response = await hook("svc/9999", { v: "ok" });
    expect(response.body).toMatchObject({ ok: true, mappingId: "m9999" });
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe("hit 9999 ok");
    expect((await hook("svc/10000", {})).status).toBe(404);
  });
});

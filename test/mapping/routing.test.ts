/** @module Routing on what senders send (match.headers, match.payload), fixed success answers, and captures of unclaimed requests. */
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { type CapturedRequest, createHooksPlugin } from "../../src/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "routing-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
afterEach(async () => host?.close());

async function start(mappings: MappingInput[], captured?: CapturedRequest[]) {
  host = await startTestHost(
    createHooksPlugin(captured ? { capture: (request) => captured.push(request) } : {}),
    { hooks: { enabled: true, token: TOKEN, mappings } },
    { configDir: REPO_ROOT },
  );
}

describe("match.headers and match.payload", () => {
  const mappings: MappingInput[] = [
    {
      id: "push",
      match: { path: "github", headers: { "X-GitHub-Event": "push" } },
      action: "wake",
      textTemplate: "push",
    },
    {
      id: "pr-or-issue",
      match: { path: "github", headers: { "x-github-event": ["pull_request", "issues"] } },
      action: "wake",
      textTemplate: "{{headers.x-github-event}}",
    },
    {
      id: "invoices",
      match: {
        path: "stripe",
        payload: { type: ["invoice.paid", "invoice.payment_failed"], "data.object.livemode": true },
      },
      action: "wake",
      textTemplate: "{{type}}",
    },
    {
      id: "first-line",
      match: { path: "stripe", payload: { "lines[0].kind": "x" } },
      action: "wake",
      textTemplate: "line",
    },
  ];

  it.each([
    ["github", { "x-github-event": "push" }, {}, 200, "push"],
    ["github", { "x-github-event": "issues" }, {}, 200, "pr-or-issue"],
    ["github", { "x-github-event": "star" }, {}, 404, undefined],
    ["stripe", {}, { type: "invoice.paid", data: { object: { livemode: true } } }, 200, "invoices"],
    ["stripe", {}, { type: "invoice.paid", data: { object: { livemode: "true" } } }, 404, undefined],
    ["stripe", {}, { type: "charge.failed", data: { object: { livemode: true } } }, 404, undefined],
    ["stripe", {}, { lines: [{ kind: "x" }] }, 200, "first-line"],
  ])("%s with headers %j and body %j → %i (%s)", async (path, headers, body, status, mappingId) => {
    await start(mappings);
    const response = await post(`${host.url}/hooks/${path}`, body, { ...AUTH, ...headers });
    expect(response.status).toBe(status);
    if (mappingId) expect(response.body.mappingId).toBe(mappingId);
  });

  it("a payload path through the prototype is a config error", async () => {
    await expect(
      start([
        {
          match: { path: "p", payload: { "constructor.name": "Object" } },
          action: "wake",
          textTemplate: "x",
        },
      ]),
    ).rejects.toThrow(/hooks\.mappings\[0\]\.match\.payload: "constructor\.name" is not a dotted path/);
  });
});

describe("a fixed success response", () => {
  it("replaces the JSON body on success, renders its template, and leaves errors JSON", async () => {
    await start([
      {
        match: { path: "slash" },
        action: "wake",
        textTemplate: "{{text}}",
        response: {
          status: 202,
          contentType: "application/vnd.reply+json",
          body: '{"text":"Thanks {{user}}"}',
        },
      },
      { match: { path: "quiet" }, action: "wake", textTemplate: "{{text}}", response: { status: 204 } },
    ]);
    const ok = await fetch(`${host.url}/hooks/slash`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi", user: "ada" }),
    });
    expect(ok.status).toBe(202);
    expect(ok.headers.get("content-type")).toBe("application/vnd.reply+json");
    expect(await ok.text()).toBe('{"text":"Thanks ada"}');
    const quiet = await fetch(`${host.url}/hooks/quiet`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi" }),
    });
    expect(quiet.status).toBe(204);
    const refused = await post(`${host.url}/hooks/slash`, { text: "" }, AUTH);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("INVALID_PAYLOAD");
    expect(host.eventsOf("session:system-event")).toHaveLength(2);
  });
});

describe("captures", () => {
  it("records an authenticated request that no mapping claims yet, exact bytes and no credentials, and still answers 404", async () => {
    const captured: CapturedRequest[] = [];
    await start([{ match: { path: "known" }, action: "wake", textTemplate: "x" }], captured);
    const body = '{ "first" : "delivery" }';
    const response = await fetch(`${host.url}/hooks/brand-new-sender?token=${TOKEN}&x=1`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=abc", "x-sender": "new" },
      body,
    });
    expect(response.status).toBe(404);
    expect(captured).toHaveLength(1);
    expect(captured[0]!.hook).toBe("brand-new-sender");
    expect(captured[0]!.rawBody.toString("utf8")).toBe(body);
    expect(captured[0]!.headers["x-sender"]).toBe("new");
    expect(captured[0]!.headers).not.toHaveProperty("x-hub-signature-256");
    expect(captured[0]!.query).toEqual({ x: "1" });
  });

  it("does not capture what failed authentication", async () => {
    const captured: CapturedRequest[] = [];
    await start([], captured);
    const response = await post(`${host.url}/hooks/anything`, { a: 1 }, { authorization: "Bearer wrong" });
    expect(response.status).toBe(401);
    expect(captured).toHaveLength(0);
  });
});

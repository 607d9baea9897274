/** @module The inspector's HTTP API and page on the reference gateway's own port, without a browser: login, redaction, actions, headers. */
import JSON5 from "json5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { AUTH, baseConfig, TOKEN } from "../gateway/support.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

const SECRET = "inspector-signing-secret-0a1b2c3d4e5f";
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

let gateway: GatewayHandle;
let base: string;
/** Every body the inspector answered in this file: none may hold a credential. */
const answered: string[] = [];
const emitted: string[] = [];

async function call(
  path: string,
  init: RequestInit & { cookie?: string } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => any }> {
  const headers = new Headers(init.headers);
  if (init.cookie) headers.set("cookie", init.cookie);
  const response = await fetch(`${base}${path}`, { ...init, headers, redirect: "manual" });
  const text = await response.text();
  answered.push(text);
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

async function logIn(): Promise<string> {
  const response = await call("/api/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key: gateway.inspectorKey }),
  });
  expect(response.status).toBe(200);
  const cookie = response.headers.get("set-cookie")!;
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Strict/);
  expect(cookie).toMatch(/Path=\/inspector/);
  return cookie.split(";")[0]!;
}

async function send(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/hooks/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...AUTH, ...headers },
    body,
  });
  await response.arrayBuffer();
  return { status: response.status, requestId: response.headers.get("x-request-id")! };
}

/** The rows of the list, once `ready` holds (the ring is fed when the request has been answered and journaled). */
/** A request's detail once `ready`: it is read from the journal, whose `done` line follows the host's store of the events. */
async function detailUntil(cookie: string, id: string, ready: (detail: any) => boolean): Promise<any> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const detail = (await call(`/api/requests/${id}`, { cookie })).json();
    if (ready(detail) || Date.now() > deadline) return detail;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function listUntil(cookie: string, ready: (rows: any[]) => boolean, query = ""): Promise<any[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const rows = (await call(`/api/requests${query}`, { cookie })).json().requests;
    if (ready(rows) || Date.now() > deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  const dir = makeTempDir();
  gateway = await startGateway({
    config: baseConfig(
      { server: { metrics: false } },
      {
        authFailures: { limit: 3, windowSeconds: 600 },
        mappings: [
          {
            id: "signed",
            match: { path: "signed" },
            action: "wake",
            textTemplate: "signed {{name}}",
            verify: { scheme: "github", secret: SECRET },
          },
        ],
      },
    ),
    configDir: dir,
    port: 0,
    stateDir: `${dir}/state`,
    logger: silentGatewayLogger,
  });
  base = gateway.inspectorUrl!;
  for (const event of ["session:system-event", "heartbeat:request"] as const)
    gateway.bus.on(event, () => emitted.push(event));
});

afterAll(async () => {
  await gateway?.close();
  await cleanupCli();
});

describe("the inspector on its own port", () => {
  it("is served apart from the intake, at a URL the handle names", () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/inspector$/);
    expect(new URL(base).port).not.toBe(String(gateway.port));
    expect(gateway.inspectorKey).toHaveLength(32);
    expect(gateway.inspectorKeyGenerated).toBe(true);
  });

  it("without a session: the page is the login form (401), the API answers 401 with no data", async () => {
    await send("wake", JSON.stringify({ text: "before login" }));
    const page = await call("");
    expect(page.status).toBe(401);
    expect(page.text).toContain('id="login-form"');
    expect(page.text).not.toContain("before login");
    for (const path of [
      "/api/requests",
      "/api/requests/x",
      "/api/compare?a=1&b=2",
      "/api/requests/x/fixture",
    ]) {
      const response = await call(path);
      expect(response.status, path).toBe(401);
      expect(response.text).not.toContain("wake");
    }
    const posted = await call("/api/requests/x/replay", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(posted.status).toBe(401);
    expect((await call("/api/requests", { cookie: "hooks_inspector=forged" })).status).toBe(401);
  });

  it("sends a strict CSP and no-store, nosniff, no-referrer on the page, the script and the API", async () => {
    const cookie = await logIn();
    for (const path of [
      "",
      "/assets/inspector.js",
      "/assets/inspector.css",
      "/api/requests",
      "/api/nothing",
    ]) {
      const response = await call(path, { cookie });
      expect(response.headers.get("content-security-policy"), path).toBe(CSP);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("referrer-policy"), path).toBe("no-referrer");
      expect(response.headers.get("cache-control"), path).toBe("no-store");
    }
    const page = await call("", { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.text).not.toMatch(/\son[a-z]+=/);
    expect((await call("/assets/inspector.js")).headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("refuses a wrong key with 401, a non-JSON login with 415, and a guessing address with 429", async () => {
    const wrong = () =>
      call("/api/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key: "not-the-key" }),
      });
    expect((await wrong()).status).toBe(401);
    const form = await call("/api/session", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `key=${gateway.inspectorKey}`,
    });
    expect(form.status).toBe(415);
    expect(form.headers.get("set-cookie")).toBeNull();
    expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(401);
    const throttled = await wrong();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toMatch(/^\d+$/);
    // The right key is always let in, and clears the count.
    await logIn();
    expect((await wrong()).status).toBe(401);
  });

  it("lists a request within moments, newest first, and shows its detail with credentials redacted", async () => {
    const cookie = await logIn();
    const sent = await send(
      "wake?token=" + TOKEN + "&color=blue",
      JSON.stringify({ text: "hello inspector" }),
      {
        "x-api-key": "some-api-key-value-123",
        "idempotency-key": "delivery-1",
      },
    );
    expect(sent.status).toBe(200);
    const rows = await listUntil(cookie, (rows) => rows.some((row) => row.requestId === sent.requestId));
    const row = rows.find((row) => row.requestId === sent.requestId);
    expect(rows[0].requestId).toBe(sent.requestId);
    expect(row).toMatchObject({ hook: "wake", status: 200 });
    expect(typeof row.durationMs).toBe("number");
    const detail = (await call(`/api/requests/${row.id}`, { cookie })).json();
    // Credential headers are not stored at all, or kept by name only.
    for (const name of ["authorization", "x-api-key"])
      expect([undefined, "[redacted]"]).toContain(detail.headers[name]);
    expect(detail.headers["idempotency-key"]).toBe("delivery-1");
    expect(detail.query).toEqual({ color: "blue" });
    expect(detail.url).toBe("/hooks/wake?color=blue");
    expect(detail.body).toEqual({ kind: "json", value: { text: "hello inspector" } });
    expect(detail.verification).toBe("token accepted");
    expect(detail.events).toEqual([
      expect.objectContaining({ event: "session:system-event" }),
      expect.objectContaining({ event: "heartbeat:request" }),
    ]);
  });

  it("filters by status class, hook and text", async () => {
    const cookie = await logIn();
    const bad = await send("wake", "{not json");
    expect(bad.status).toBe(400);
    const refused = await listUntil(
      cookie,
      (rows) => rows.some((row) => row.requestId === bad.requestId),
      "?status=4xx",
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((row) => row.status >= 400 && row.status < 500)).toBe(true);
    const row = refused.find((row) => row.requestId === bad.requestId);
    expect(row).toMatchObject({ state: "refused", code: "INVALID_JSON" });
    const detail = (await call(`/api/requests/${row.id}`, { cookie })).json();
    expect(detail.verification).toMatch(/INVALID_JSON/);
    const byText = (await call(`/api/requests?text=${bad.requestId.slice(0, 12)}`, { cookie })).json()
      .requests;
    expect(byText.map((r: any) => r.requestId)).toEqual([bad.requestId]);
    expect((await call("/api/requests?hook=nothing-here", { cookie })).json().requests).toEqual([]);
  });

  it("a refused request's detail: reason, what to check, the sender's message, client, method, URL, headers by name", async () => {
    const cookie = await logIn();
    const noToken = await fetch(`${gateway.url}/hooks/wake?color=red`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-trace": "no-token" },
      body: JSON.stringify({ text: "no token" }),
    });
    expect(noToken.status).toBe(401);
    const wrong = await send("wake", JSON.stringify({ text: "wrong token" }), {
      authorization: "Bearer not-the-token",
    });
    expect(wrong.status).toBe(401);
    const missingId = noToken.headers.get("x-request-id")!;
    const rows = await listUntil(
      cookie,
      (rows) => rows.some((row) => row.requestId === wrong.requestId),
      "?status=401",
    );
    const missingRow = rows.find((row) => row.requestId === missingId);
    expect(missingRow).toMatchObject({ state: "refused", code: "UNAUTHORIZED", reason: "TOKEN_MISSING" });
    expect(missingRow.client).toMatch(/127\.0\.0\.1$/);
    const missing = (await call(`/api/requests/${missingRow.id}`, { cookie })).json();
    expect(missing).toMatchObject({
      reason: "TOKEN_MISSING",
      verification: "TOKEN_MISSING",
      client: missingRow.client,
      method: "POST",
      url: "/hooks/wake?color=red",
      query: { color: "red" },
    });
    expect(missing.explanation).toMatch(/No token was sent/);
    expect(missing.error).toEqual(expect.any(String));
    expect(missing.headers["x-trace"]).toBe("no-token");
    expect(missing.headers).not.toHaveProperty("authorization");
    expect(missing.body).toBeUndefined();
    const wrongRow = rows.find((row) => row.requestId === wrong.requestId);
    const wrongDetail = (await call(`/api/requests/${wrongRow.id}`, { cookie })).json();
    expect(wrongDetail).toMatchObject({ reason: "TOKEN_WRONG", headers: { authorization: "[redacted]" } });
    expect(wrongDetail.explanation).toMatch(/not the hook token/);
    // The text filter finds refusals by reason and by address.
    const byReason = (await call("/api/requests?text=token_wrong", { cookie })).json().requests;
    expect(byReason.map((row: any) => row.requestId)).toEqual([wrong.requestId]);
  });

  it("an accepted wake: its system event's outcome on the row and in the detail", async () => {
    const cookie = await logIn();
    const sent = await send("wake", JSON.stringify({ text: "outcome", mode: "next-heartbeat" }));
    const [row] = await listUntil(
      cookie,
      (rows) => rows[0]?.requestId === sent.requestId && rows[0].state === "done",
    );
    // Queued, or coalesced behind a wake of an earlier test that no heartbeat has taken yet.
    expect(row.outcome).toMatch(/^(queued|coalesced)$/);
    // The list is fed from memory at once; the detail from the journal, which lists the outcome with its `done` line.
    const detail = await detailUntil(cookie, row.id, (found) => found.outcome !== undefined);
    expect(detail.outcome).toBe(row.outcome);
    expect(detail.events).toEqual([
      { event: "session:system-event", id: expect.any(String), agentId: "main", outcome: row.outcome },
    ]);
  });

  it("a dry run shows the plan and emits nothing; a replay emits once, with a new id, marked as a replay", async () => {
    const cookie = await logIn();
    const sent = await send("wake", JSON.stringify({ text: "replay me" }));
    const [row] = await listUntil(cookie, (rows) => rows[0]?.requestId === sent.requestId);
    const before = emitted.length;
    const post = (action: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
      call(`/api/requests/${row.id}/${action}`, { method: "POST", headers, body: "{}", cookie });
    expect((await post("dry-run", { "content-type": "text/plain" })).status).toBe(415);
    const dry = await post("dry-run");
    expect(dry.status).toBe(200);
    const report = dry.json();
    expect(report.note).toMatch(/nothing was sent/);
    expect(report.status).toBe(200);
    expect(report.events.map((event: any) => event.event)).toEqual([
      "session:system-event",
      "heartbeat:request",
    ]);
    expect(emitted.length).toBe(before);
    const replay = await post("replay");
    expect(replay.status).toBe(200);
    const replayed = replay.json();
    expect(replayed).toMatchObject({ status: 200, duplicate: false });
    expect(replayed.requestId).not.toBe(sent.requestId);
    expect(emitted.slice(before)).toEqual(["session:system-event", "heartbeat:request"]);
    const rows = await listUntil(cookie, (rows) => rows[0]?.requestId === replayed.requestId);
    expect(rows[0].replayOf).toBe(row.id);
  });

  it("replaying a delivery still inside the duplicate window does nothing and says so", async () => {
    const cookie = await logIn();
    const sent = await send("wake", JSON.stringify({ text: "once only" }), {
      "idempotency-key": "only-once-42",
    });
    const [row] = await listUntil(cookie, (rows) => rows[0]?.requestId === sent.requestId);
    const before = emitted.length;
    const replay = await call(`/api/requests/${row.id}/replay`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      cookie,
    });
    expect(replay.json()).toMatchObject({ duplicate: true, status: 200 });
    expect(emitted.length).toBe(before);
  });

  it("saves a fixture without credentials, copies a curl line with a $HOOKS_TOKEN placeholder, compares two requests", async () => {
    const cookie = await logIn();
    const first = await send("wake", JSON.stringify({ text: "one", mode: "now" }), { "x-trace": "a" });
    const second = await send("wake", JSON.stringify({ text: "two", mode: "now" }), { "x-trace": "b" });
    const rows = await listUntil(cookie, (rows) => rows[0]?.requestId === second.requestId);
    const a = rows.find((row) => row.requestId === first.requestId).id;
    const b = rows[0].id;
    const fixture = await call(`/api/requests/${a}/fixture`, { cookie });
    expect(fixture.headers.get("content-disposition")).toMatch(/^attachment; filename=".*\.json5"$/);
    const parsed = JSON5.parse(fixture.text);
    expect(parsed.request).toMatchObject({
      method: "POST",
      path: "wake",
      bodyJson: { text: "one", mode: "now" },
    });
    expect(Object.keys(parsed.request.headers)).not.toContain("authorization");
    const curl = (await call(`/api/requests/${a}/curl`, { cookie })).text;
    expect(curl).toContain('-H "Authorization: Bearer $HOOKS_TOKEN"');
    expect(curl).toContain(`"$HOOKS_URL"'/hooks/wake'`);
    expect(curl).toContain(`--data-binary '{"text":"one","mode":"now"}'`);
    const comparison = (await call(`/api/compare?a=${a}&b=${b}`, { cookie })).json();
    expect(comparison.headers).toContainEqual({ name: "x-trace", a: "a", b: "b" });
    expect(comparison.body.filter((part: any) => part.kind !== "same")).toEqual([
      { kind: "removed", lines: ['  "text": "one",'] },
      { kind: "added", lines: ['  "text": "two",'] },
    ]);
  });

  it("a signed request: verified, its curl line says it carries no signature", async () => {
    const cookie = await logIn();
    const { createHmac } = await import("node:crypto");
    const body = JSON.stringify({ name: "sig" });
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const response = await fetch(`${gateway.url}/hooks/signed`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": signature,
        "x-github-event": "push",
        "x-github-delivery": "d-signed-1",
      },
      body,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    const [row] = await listUntil(cookie, (rows) => rows[0]?.requestId === requestId);
    const detail = (await call(`/api/requests/${row.id}`, { cookie })).json();
    expect(detail.verification).toBe("signature accepted (github)");
    expect([undefined, "[redacted]"]).toContain(detail.headers["x-hub-signature-256"]);
    expect(detail.headers["x-github-event"]).toBe("push");
    const curl = (await call(`/api/requests/${row.id}/curl`, { cookie })).text;
    expect(curl).toMatch(/^# A signed path/);
    expect(curl).not.toContain("HOOKS_TOKEN");
    const before = emitted.length;
    const replay = await call(`/api/requests/${row.id}/replay`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      cookie,
    });
    // Signed afresh with the path's secret, its delivery id kept: the gateway still remembers it.
    expect(replay.json()).toMatchObject({ status: 200, duplicate: true });
    expect(emitted.length).toBe(before);
  });

  it("refuses an action or a login sent from another origin with 403 CROSS_ORIGIN, and does nothing", async () => {
    const cookie = await logIn();
    const sent = await send("wake", JSON.stringify({ text: "not from elsewhere" }));
    const [row] = await listUntil(cookie, (rows) => rows[0]?.requestId === sent.requestId);
    const own = new URL(base).origin;
    const json = { "content-type": "application/json" };
    const before = emitted.length;
    const foreign: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      // Another port of the same host is another origin: the intake's own port, say.
      { origin: gateway.url },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { origin: own, "sec-fetch-site": "cross-site" },
    ];
    for (const headers of foreign) {
      for (const action of ["replay", "dry-run"]) {
        const refused = await call(`/api/requests/${row.id}/${action}`, {
          method: "POST",
          headers: { ...json, ...headers },
          body: "{}",
          cookie,
        });
        expect({ action, headers, status: refused.status }).toEqual({ action, headers, status: 403 });
        expect(refused.json().error.code).toBe("CROSS_ORIGIN");
      }
      const login = await call("/api/session", {
        method: "POST",
        headers: { ...json, ...headers },
        body: JSON.stringify({ key: gateway.inspectorKey }),
      });
      expect(login.status).toBe(403);
      expect(login.headers.get("set-cookie")).toBeNull();
      const logout = await call("/api/session", { method: "DELETE", headers, cookie });
      expect(logout.status).toBe(403);
    }
    expect(emitted.length).toBe(before);
    // The session still works: the refused logout ended nothing.
    expect((await call("/api/requests", { cookie })).status).toBe(200);
    // From its own page (its origin, same-origin fetch metadata), and from a client that sends no Origin: served.
    const ownPage = await call(`/api/requests/${row.id}/replay`, {
      method: "POST",
      headers: { ...json, origin: own, "sec-fetch-site": "same-origin" },
      body: "{}",
      cookie,
    });
    expect(ownPage.status).toBe(200);
    const noOrigin = await call(`/api/requests/${row.id}/dry-run`, {
      method: "POST",
      headers: json,
      body: "{}",
      cookie,
    });
    expect(noOrigin.status).toBe(200);
    // Behind a proxy that passes its own Host on (nginx's default): the browser's same-origin says it is the page.
    const proxied = await call(`/api/requests/${row.id}/dry-run`, {
      method: "POST",
      headers: { ...json, origin: "https://gateway.example.com", "sec-fetch-site": "same-origin" },
      body: "{}",
      cookie,
    });
    expect(proxied.status).toBe(200);
  });

  it("hides the key made for this start where a sender put it", async () => {
    const cookie = await logIn();
    const sent = await send("wake", JSON.stringify({ text: `key ${gateway.inspectorKey}` }));
    const [row] = await listUntil(cookie, (rows) => rows[0]?.requestId === sent.requestId);
    const detail = await detailUntil(cookie, row.id, (detail) => detail.body !== undefined);
    expect(detail.body.value.text).toBe("key [redacted]");
  });

  it("no answer of the inspector ever held the token, the signing secret or the key", () => {
    expect(answered.length).toBeGreaterThan(20);
    for (const text of answered) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(gateway.inspectorKey!);
    }
  });
});

describe("the handler under a host's own auth", () => {
  it("serves the page and API without a login, and leaves paths outside its base to the host", async () => {
    const { createServer } = await import("node:http");
    const { createInspectorHandler } = await import("../../src/index.js");
    const rows = [{ id: "k1", requestId: "r1", at: 1, hook: "wake", status: 200, state: "done" }];
    const handler = createInspectorHandler({
      source: () => ({
        journaling: true,
        list: async () => rows,
        detail: async (id) => (id === "k1" ? { ...rows[0]! } : undefined),
        dryRun: async () => undefined,
        replay: async () => undefined,
        fixture: async () => undefined,
      }),
      auth: { kind: "host" },
      basePath: "/hooks-intake/inspector",
      framing: "same-origin",
    });
    const server = createServer((req, res) => {
      void handler(req, res).then((handled) => {
        if (!handled) res.writeHead(418).end("the host's");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const at = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${port}${path}`, init);
    try {
      const page = await at("/hooks-intake/inspector");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('data-base="/hooks-intake/inspector"');
      // Its host's own UI may frame it; nobody else.
      expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors 'self'$/);
      expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      const listed = (await (await at("/hooks-intake/inspector/api/requests")).json()) as {
        requests: unknown;
      };
      expect(listed.requests).toEqual(rows);
      expect((await at("/hooks-intake/inspector/api/requests/k1")).status).toBe(200);
      expect((await at("/hooks-intake/inspector/api/requests/%E0%A4%A")).status).toBe(404);
      const dry = await at("/hooks-intake/inspector/api/requests/k1/dry-run", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(dry.status).toBe(404);
      expect((await at("/hooks-intake/other")).status).toBe(418);
      expect((await at("/hooks-intake/inspectorx")).status).toBe(418);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the inspector's own secrets", () => {
  it("shows neither its key nor the metrics token that a sender put in a body, a header or the query", async () => {
    const dir = makeTempDir();
    const key = "inspector-own-key-5e6f7a8b9c0d1e2f";
    const metricsToken = "metrics-token-3a4b5c6d7e8f9a0b";
    const own = await startGateway({
      config: baseConfig({ server: { metricsToken, inspector: { key } } }),
      configDir: dir,
      port: 0,
      stateDir: `${dir}/state`,
      logger: silentGatewayLogger,
    });
    try {
      const inspector = own.inspectorUrl!;
      const texts: string[] = [];
      const get = async (path: string, init: RequestInit = {}) => {
        const response = await fetch(`${inspector}${path}`, { ...init, redirect: "manual" });
        const text = await response.text();
        texts.push(text);
        return { status: response.status, headers: response.headers, text };
      };
      const login = await get("/api/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key }),
      });
      expect(login.status).toBe(200);
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
      const sent = await fetch(`${own.url}/hooks/wake?note=${metricsToken}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...AUTH, "x-note": `${key} ${metricsToken}` },
        body: JSON.stringify({ text: `the key ${key} and the metrics token ${metricsToken}` }),
      });
      expect(sent.status).toBe(200);
      const requestId = sent.headers.get("x-request-id");
      const deadline = Date.now() + 5_000;
      let row: { id: string } | undefined;
      while (row === undefined && Date.now() < deadline) {
        const listed = JSON.parse((await get("/api/requests", { headers: { cookie } })).text);
        row = listed.requests.find((r: { requestId: string }) => r.requestId === requestId);
        if (row === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(row).toBeDefined();
      const detail = JSON.parse((await get(`/api/requests/${row!.id}`, { headers: { cookie } })).text);
      expect(detail.body.value.text).toBe("the key [redacted] and the metrics token [redacted]");
      expect(detail.headers["x-note"]).toBe("[redacted] [redacted]");
      await get(`/api/requests/${row!.id}/fixture`, { headers: { cookie } });
      await get(`/api/requests/${row!.id}/curl`, { headers: { cookie } });
      await get(`/api/compare?a=${row!.id}&b=${row!.id}`, { headers: { cookie } });
      const dry = await get(`/api/requests/${row!.id}/dry-run`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, origin: new URL(inspector).origin },
        body: "{}",
      });
      expect(dry.status).toBe(200);
      expect(texts.length).toBeGreaterThan(6);
      for (const text of texts) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(metricsToken);
      }
    } finally {
      await own.close();
    }
  });
});

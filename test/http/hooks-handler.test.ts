import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type CapturedRequest, createHooksPlugin } from "../../src/index.js";
import { headFor, rawRequest } from "../helpers/raw-http.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "http-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
afterEach(async () => host?.close());

const start = (hooks: Record<string, unknown> = {}) =>
  startTestHost(createHooksPlugin(), { hooks: { enabled: true, token: TOKEN, ...hooks } }).then((h) => {
    host = h;
    return h;
  });

/** fetch labels a string body text/plain; a JSON sender says application/json unless the case says otherwise. */
async function send(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const headers = { "content-type": "application/json", ...init.headers };
  const response = await fetch(`${host.url}${path}`, { method: "POST", ...init, headers });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? JSON.parse(text) : undefined,
  };
}

describe("HTTP contract", () => {
  it.each([
    {
      name: "GET on a hook",
      path: "/hooks/wake",
      init: { method: "GET", headers: AUTH },
      status: 405,
      code: "METHOD_NOT_ALLOWED",
    },
    {
      name: "no token",
      path: "/hooks/wake",
      init: { body: '{"text":"x"}' },
      status: 401,
      code: "UNAUTHORIZED",
    },
    {
      name: "wrong token",
      path: "/hooks/wake",
      init: { body: '{"text":"x"}', headers: { authorization: "Bearer nope" } },
      status: 401,
      code: "UNAUTHORIZED",
    },
    {
      name: "bare hooks path",
      path: "/hooks",
      init: { body: "{}", headers: AUTH },
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "bare hooks path with slash",
      path: "/hooks/",
      init: { body: "{}", headers: AUTH },
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "unknown hook name",
      path: "/hooks/nothing-here",
      init: { body: "{}", headers: AUTH },
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "text/plain body",
      path: "/hooks/wake",
      init: { body: "hi", headers: { ...AUTH, "content-type": "text/plain" } },
      status: 415,
      code: "UNSUPPORTED_MEDIA_TYPE",
    },
    {
      name: "invalid JSON",
      path: "/hooks/wake",
      init: { body: "{nope", headers: { ...AUTH, "content-type": "application/json" } },
      status: 400,
      code: "INVALID_JSON",
    },
    {
      name: "empty body is {} (text missing)",
      path: "/hooks/wake",
      init: { headers: AUTH },
      status: 400,
      code: "INVALID_PAYLOAD",
    },
    {
      name: "JSON array body",
      path: "/hooks/wake",
      init: { body: "[1]", headers: AUTH },
      status: 400,
      code: "INVALID_PAYLOAD",
    },
    {
      name: "over the body limit",
      path: "/hooks/wake",
      init: { body: JSON.stringify({ text: "x".repeat(2000) }), headers: AUTH },
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
    },
  ])("$name → $status $code", async ({ path, init, status, code }) => {
    await start({ maxBodyBytes: 1024 });
    const response = await send(path, init as RequestInit & { headers?: Record<string, string> });
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.body).toMatchObject({ ok: false, code });
    expect(typeof response.body.error).toBe("string");
    expect(response.headers.get("x-request-id")).toBeTruthy();
    if (status === 405) expect(response.headers.get("allow")).toBe("POST");
    if (status === 401) expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
  });

  it.each([
    { name: "Bearer, scheme in any case", headers: { authorization: `bEaReR ${TOKEN}` } },
    { name: "X-Service-Token", headers: { "x-service-token": TOKEN } },
    { name: "X-OpenClaw-Token (OpenClaw's own hooks' header)", headers: { "x-openclaw-token": TOKEN } },
    { name: "+json content type", headers: { ...AUTH, "content-type": "application/vnd.api+json" } },
    { name: "no content type", headers: { ...AUTH, "content-type": "" } },
  ])("accepts $name", async ({ headers }) => {
    await start();
    const response = await send("/hooks/wake", { body: JSON.stringify({ text: "hi" }), headers });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ok: true, mode: "now" });
  });

  it("parses form bodies, repeated keys as arrays", async () => {
    await start();
    const response = await send("/hooks/wake", {
      body: "text=from+a+form&tag=a&tag=b",
      headers: { ...AUTH, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(200);
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe("from a form");
  });

  it("accepts the deprecated query token with Deprecation: true, warns at most once, never logs it", async () => {
    await start();
    for (let i = 0; i < 3; i++) {
      const response = await send(`/hooks/wake?token=${TOKEN}`, { body: JSON.stringify({ text: "q" }) });
      expect(response.status).toBe(200);
      expect(response.headers.get("deprecation")).toBe("true");
    }
    expect(
      host.logs.filter((line) => line.level === "warn" && /query string/.test(line.message)),
    ).toHaveLength(1);
    expect(JSON.stringify(host.logs)).not.toContain(TOKEN);
    expect(JSON.stringify(host.events)).not.toContain(TOKEN);
  });

  it("the first token found wins: a wrong Bearer is not rescued by a right X-Service-Token", async () => {
    await start();
    const response = await send("/hooks/wake", {
      body: JSON.stringify({ text: "x" }),
      headers: { authorization: "Bearer wrong", "x-service-token": TOKEN },
    });
    expect(response.status).toBe(401);
  });

  it("throttles after 20 failures with 429 + Retry-After; a correct token resets; 405s do not count", async () => {
    await start();
    const wrong = { body: JSON.stringify({ text: "x" }), headers: { authorization: "Bearer wrong" } };
    for (let i = 0; i < 30; i++) expect((await send("/hooks/wake", { method: "GET" })).status).toBe(405);
    for (let i = 0; i < 20; i++) expect((await send("/hooks/wake", wrong)).status).toBe(401);
    const throttled = await send("/hooks/wake", wrong);
    expect(throttled.status).toBe(429);
    expect(throttled.body.code).toBe("AUTH_THROTTLED");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(throttled.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // A correct token is always accepted, even while throttled, and clears the count.
    expect((await send("/hooks/wake", { body: JSON.stringify({ text: "ok" }), headers: AUTH })).status).toBe(
      200,
    );
    for (let i = 0; i < 20; i++) expect((await send("/hooks/wake", wrong)).status).toBe(401);
    expect((await send("/hooks/wake", wrong)).status).toBe(429);
  });

  it("honours a configured failure limit", async () => {
    await start({ authFailures: { limit: 2, windowSeconds: 30 } });
    const wrong = { body: "{}", headers: { authorization: "Bearer wrong" } };
    expect((await send("/hooks/wake", wrong)).status).toBe(401);
    expect((await send("/hooks/wake", wrong)).status).toBe(401);
    const third = await send("/hooks/wake", wrong);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeLessThanOrEqual(30);
  });

  it("believes X-Forwarded-For only from a trusted proxy when counting failures per client", async () => {
    const wrongFrom = (client: string) => ({
      body: "{}",
      headers: { authorization: "Bearer wrong", "x-forwarded-for": client },
    });
    await start({ authFailures: { limit: 1, windowSeconds: 60 }, trustedProxies: ["127.0.0.1"] });
    expect((await send("/hooks/wake", wrongFrom("203.0.113.7"))).status).toBe(401);
    expect((await send("/hooks/wake", wrongFrom("203.0.113.7"))).status).toBe(429);
    // Another client behind the same proxy has its own count.
    expect((await send("/hooks/wake", wrongFrom("198.51.100.9"))).status).toBe(401);
    await host.close();

    await start({ authFailures: { limit: 1, windowSeconds: 60 } });
    expect((await send("/hooks/wake", wrongFrom("203.0.113.7"))).status).toBe(401);
    // Untrusted peer: the header is ignored, so a new forwarded address does not get a fresh count.
    expect((await send("/hooks/wake", wrongFrom("198.51.100.9"))).status).toBe(429);
  });

  it("answers a 5 GiB declared Content-Length with 413 at once and closes the connection", async () => {
    await start();
    const response = await rawRequest(
      `${host.url}/`,
      headFor("/hooks/wake", {
        Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json",
        "Content-Length": String(5 * 1024 ** 3),
      }),
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).code).toBe("PAYLOAD_TOO_LARGE");
    expect(response.head.toLowerCase()).toContain("connection: close");
  });

  it("answers 413 as soon as a chunked body crosses the limit", async () => {
    await start({ maxBodyBytes: 1024 });
    const response = await rawRequest(
      `${host.url}/`,
      headFor("/hooks/wake", { Authorization: `Bearer ${TOKEN}`, "Transfer-Encoding": "chunked" }),
      // 2 KiB in one chunk, and no terminating chunk: the server must not wait for the end.
      `800\r\n${"a".repeat(2048)}\r\n`,
    );
    expect(response.status).toBe(413);
  });

  it("answers 408 when the body trickles slower than bodyTimeoutMs", async () => {
    await start({ bodyTimeoutMs: 200 });
    const started = Date.now();
    const response = await rawRequest(
      `${host.url}/`,
      headFor("/hooks/wake", {
        Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json",
        "Content-Length": "100",
      }),
      '{"text":',
    );
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body).code).toBe("BODY_TIMEOUT");
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // The request's reported duration is the time it held the connection, the body's wait included.
    const request = await host.waitForEvent("hooks:request", (r) => r.status === 408);
    expect(request.durationMs).toBeGreaterThanOrEqual(150);
  });

  it("reports a request whose client went away mid-body, queues nothing, and keeps serving", async () => {
    await start();
    const socket = connect(Number(new URL(host.url).port), "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      headFor("/hooks/wake", {
        Authorization: `Bearer ${TOKEN}`,
        "Content-Type": "application/json",
        "Content-Length": "100",
        "X-Request-Id": "gone-mid-body",
      }) + '{"text":',
    );
    // The handler has the request once its own event source knows about it; then the client vanishes.
    const reported = host.waitForEvent(
      "hooks:request",
      (event) => event.source.requestId === "gone-mid-body",
    );
    socket.destroy();
    const event = await reported;
    expect(event.status).toBe(400);
    expect(host.eventsOf("session:system-event")).toEqual([]);
    const after = await send("/hooks/wake", { headers: AUTH, body: JSON.stringify({ text: "still here" }) });
    expect(after.status).toBe(200);
  });

  it("echoes a sane X-Request-Id into the response and every event; replaces an insane one", async () => {
    await start();
    const sane = await send("/hooks/wake", {
      body: JSON.stringify({ text: "x" }),
      headers: { ...AUTH, "x-request-id": "req-123.abc" },
    });
    expect(sane.headers.get("x-request-id")).toBe("req-123.abc");
    for (const event of host.events)
      expect((event.payload as { source: { requestId: string } }).source.requestId).toBe("req-123.abc");
    const insane = await send("/hooks/wake", {
      body: JSON.stringify({ text: "x" }),
      headers: { ...AUTH, "x-request-id": "bad id with spaces" },
    });
    expect(insane.headers.get("x-request-id")).not.toBe("bad id with spaces");
    expect(insane.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("emits hooks:request with method, hook, status and duration, and no payload", async () => {
    await start();
    const started = performance.now();
    await send("/hooks/wake", { body: JSON.stringify({ text: "secret payload" }), headers: AUTH });
    const elapsed = performance.now() - started;
    await send("/hooks/wake", { body: JSON.stringify({ text: "x" }) });
    const requests = host.eventsOf("hooks:request");
    expect(requests.map((r) => [r.method, r.hook, r.status])).toEqual([
      ["POST", "wake", 200],
      ["POST", "wake", 401],
    ]);
    // In milliseconds, and within what the client saw (the 408 case below shows it counts the body's wait).
    expect(requests[0]!.durationMs).toBeLessThanOrEqual(elapsed);
    expect(JSON.stringify(requests)).not.toContain("secret payload");
  });

  it("hands authenticated requests to the host's capture hook without credentials", async () => {
    const captured: CapturedRequest[] = [];
    host = await startTestHost(createHooksPlugin({ capture: (r) => captured.push(r) }), {
      hooks: { enabled: true, token: TOKEN },
    });
    await send(`/hooks/wake?token=${TOKEN}&page=2`, {
      body: '{"text":"captured"}',
      headers: { cookie: "a=b", "x-custom": "kept" },
    });
    await send("/hooks/wake", { body: '{"text":"refused"}', headers: { authorization: "Bearer wrong" } });
    expect(captured).toHaveLength(1);
    expect(captured[0]).toMatchObject({
      method: "POST",
      hook: "wake",
      query: { page: "2" },
      headers: { "x-custom": "kept" },
    });
    expect(captured[0]!.rawBody.toString()).toBe('{"text":"captured"}');
    expect(JSON.stringify(captured)).not.toContain(TOKEN);
    expect(captured[0]!.headers).not.toHaveProperty("cookie");
  });

  it("registers no route unless hooks.enabled is true", async () => {
    host = await startTestHost(createHooksPlugin(), { hooks: { token: TOKEN } });
    expect(host.routes).toHaveLength(0);
    await host.close();
    host = await startTestHost(createHooksPlugin(), { hooks: { enabled: true, token: TOKEN } });
    expect(host.routes.map((route) => [route.path, route.match, route.auth])).toEqual([
      ["/hooks", "prefix", "plugin"],
    ]);
  });

  it("matches hook names as sent, never percent-decoded: /hooks/wak%65 is not wake", async () => {
    await start();
    const encoded = await send("/hooks/wak%65", { body: JSON.stringify({ text: "x" }), headers: AUTH });
    expect(encoded.status).toBe(404);
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
  });

  it("accepts CIDR ranges and proxy-addr names in trustedProxies, and refuses what is neither", async () => {
    await start({
      authFailures: { limit: 1, windowSeconds: 60 },
      trustedProxies: ["10.0.0.0/8", "loopback"],
    });
    const wrongFrom = (client: string) => ({
      body: "{}",
      headers: { authorization: "Bearer wrong", "x-forwarded-for": client },
    });
    expect((await send("/hooks/wake", wrongFrom("203.0.113.7"))).status).toBe(401);
    // The loopback peer is a trusted proxy: the forwarded client has its own count.
    expect((await send("/hooks/wake", wrongFrom("198.51.100.9"))).status).toBe(401);
    expect((await send("/hooks/wake", wrongFrom("203.0.113.7"))).status).toBe(429);
    await host.close();
    await expect(
      startTestHost(createHooksPlugin(), {
        hooks: { enabled: true, token: TOKEN, trustedProxies: ["10.0.0.0/33"] },
      }),
    ).rejects.toThrow(/hooks\.trustedProxies: invalid range/);
  });

  it("settles the handler's promise only once the response has ended and the events are emitted", async () => {
    await start();
    const route = host.routes[0]!;
    const seen: string[] = [];
    host.bus.on("session:system-event", () => seen.push("event"));
    const server = createServer((req, res) => {
      res.on("finish", () => seen.push("response ended"));
      void route.handler(req, res).then((answered) => seen.push(`handler settled: ${answered}`));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/hooks/wake`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ text: "scoped" }),
    });
    expect(response.status).toBe(200);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // A wake's event goes before its answer, which says what became of it (eventOutcome).
    expect(seen).toEqual(["event", "response ended", "handler settled: true"]);
  });
});

describe("ports swapped through createHooksPlugin", () => {
  it("a journal that cannot record answers 503 UNAVAILABLE with Retry-After and emits nothing", async () => {
    const admitted: string[] = [];
    let failing = true;
    host = await startTestHost(
      createHooksPlugin({
        journal: {
          open: async () => ({ unfinished: [], deliveries: [] }),
          async admit(record) {
            if (failing) throw new Error("ENOSPC: no space left on device");
            admitted.push(record.id);
          },
          handed() {},
          done() {},
          answered() {},
          async close() {},
        },
      }),
      { hooks: { enabled: true, token: TOKEN } },
    );
    const refused = await send("/hooks/wake", { body: JSON.stringify({ text: "keep me" }), headers: AUTH });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.body).toEqual({ ok: false, code: "UNAVAILABLE", error: expect.any(String) });
    expect(refused.text).not.toContain("ENOSPC");
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
    expect(host.logs.some((line) => line.level === "error" && line.message.includes("ENOSPC"))).toBe(true);

    failing = false;
    const accepted = await send("/hooks/wake", { body: JSON.stringify({ text: "keep me" }), headers: AUTH });
    expect(accepted.status).toBe(200);
    expect(admitted).toEqual([accepted.headers.get("x-request-id")]);
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
  });

  it("a swapped store counts failures and a swapped clock and id source drive windows and ids", async () => {
    const hits: string[] = [];
    let n = 0;
    host = await startTestHost(
      createHooksPlugin({
        store: {
          async increment(key, windowMs) {
            hits.push(key);
            return { count: 99, resetAt: 1_000_000 + windowMs };
          },
          async peek() {
            return undefined;
          },
          async reset() {},
          async claimDelivery() {
            return { state: "first", claim: "c" };
          },
          async settleDelivery() {},
          async rememberDeliveries() {
            return 0;
          },
          async close() {},
        },
        clock: { now: () => 1_000_000 },
        ids: {
          uuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
          markerId: () => "feedfacefeedface",
        },
      }),
      { hooks: { enabled: true, token: TOKEN } },
    );
    const throttled = await send("/hooks/wake", { body: "{}", headers: { authorization: "Bearer wrong" } });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toBe("60");
    expect(hits).toEqual(["auth-failures:127.0.0.1"]);
    const woken = await send("/hooks/wake", { body: JSON.stringify({ text: "hi" }), headers: AUTH });
    // Ids in the order they are drawn: the refused request's id, this request's id, its event's id.
    expect(woken.headers.get("x-request-id")).toBe("00000000-0000-4000-8000-000000000002");
    expect(woken.body.eventId).toBe("00000000-0000-4000-8000-000000000003");
    expect(host.eventsOf("session:system-event")[0]!.text).toContain('id="feedfacefeedface"');
  });
});

describe("the adapter's promise and claim", () => {
  it("settles for a pipelined request whose client left while it waited behind another", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hooks-pipelined-"));
    try {
      writeFileSync(
        path.join(dir, "slow.mjs"),
        "export default async () => { await new Promise((r) => setTimeout(r, 300)); return undefined; };\n",
      );
      // Capture sees each request once its body is read, just before the slow transform runs.
      let read = 0;
      let bothRead: () => void = () => undefined;
      const bothInTransform = new Promise<void>((resolve) => {
        bothRead = resolve;
      });
      host = await startTestHost(
        createHooksPlugin({
          capture: () => {
            if (++read === 2) bothRead();
          },
        }),
        {
          hooks: {
            enabled: true,
            token: TOKEN,
            transformsDir: dir,
            mappings: [
              {
                match: { path: "slow" },
                action: "wake",
                textTemplate: "slow",
                transform: { module: "slow.mjs" },
              },
            ],
          },
        },
      );
      const { port } = new URL(host.url);
      const socket = connect(Number(port), "127.0.0.1");
      await once(socket, "connect");
      const body = "{}";
      const head = headFor("/hooks/slow", {
        ...AUTH,
        "content-type": "application/json",
        "content-length": String(body.length),
      });
      socket.write(head + body + head + body);
      await bothInTransform;
      socket.destroy();
      // Each request's handler settles and reports: none is left waiting for a response that cannot be sent.
      await vi.waitFor(() => expect(host.eventsOf("hooks:request")).toHaveLength(2), { timeout: 3_000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a path outside hooks.path to the host: no answer, and false", async () => {
    await start();
    const route = host.routes[0]!;
    const results: boolean[] = [];
    const server = createServer((req, res) => {
      void route.handler(req, res).then((claimed) => {
        results.push(claimed);
        if (!claimed) res.writeHead(418).end();
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    const elsewhere = await fetch(`http://127.0.0.1:${port}/hooksmith/wake`, {
      method: "POST",
      headers: AUTH,
    });
    const ours = await fetch(`http://127.0.0.1:${port}/hooks/nothing-here`, {
      method: "POST",
      headers: AUTH,
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect([elsewhere.status, ours.status]).toEqual([418, 404]);
    expect(results).toEqual([false, true]);
    expect(host.eventsOf("hooks:request").map((event) => event.hook)).toEqual(["nothing-here"]);
  });

  it("answers at once, not at the body deadline, when the client left before the body was read", async () => {
    const { readLimitedBody } = await import("../../src/pipeline/stages/read-body.js");
    const { Readable } = await import("node:stream");
    const gone = new Readable({ read() {} });
    gone.destroy();
    await once(gone, "close");
    const started = performance.now();
    await expect(readLimitedBody(gone, { maxBytes: 10, timeoutMs: 2_000 })).rejects.toMatchObject({
      code: "INVALID_PAYLOAD",
    });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("transform runner and verifiers swapped through createHooksPlugin", () => {
  it("calls the given transform runner and judges credentials with the given verifiers", async () => {
    const ran: string[] = [];
    host = await startTestHost(
      createHooksPlugin({
        transformRunner: (settings) => ({
          async load() {},
          async run(transform, context) {
            ran.push(`${transform.module} in ${path.basename(settings.transformsDir)} for ${context.path}`);
            return { kind: "wake", text: "from the runner" };
          },
          async close() {},
        }),
        verifiers: () => ({
          forHook: () => ({
            kind: "header",
            signsBody: false,
            async verify(request) {
              return request.headers["x-shared-secret"] === "open sesame"
                ? { ok: true, viaQuery: false }
                : { ok: false, message: "Say the word." };
            },
          }),
        }),
      }),
      {
        hooks: {
          enabled: true,
          token: TOKEN,
          transformsDir: "/tmp/elsewhere",
          mappings: [{ match: { path: "x" }, transform: { module: "any.ts" } }],
        },
      },
    );
    const refused = await send("/hooks/x", { body: "{}", headers: AUTH });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("Say the word.");
    const accepted = await send("/hooks/x", { body: "{}", headers: { "x-shared-secret": "open sesame" } });
    expect(accepted.status).toBe(200);
    expect(ran).toEqual(["any.ts in elsewhere for x"]);
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe("from the runner");
  });
});

describe("two plugin instances in one process", () => {
  it("share nothing: one's auth failures do not throttle the other", async () => {
    const other = await startTestHost(createHooksPlugin(), {
      hooks: { enabled: true, token: TOKEN, authFailures: { limit: 1, windowSeconds: 60 } },
    });
    try {
      await start({ authFailures: { limit: 1, windowSeconds: 60 } });
      const wrong = { body: "{}", headers: { authorization: "Bearer wrong" } };
      expect((await send("/hooks/wake", wrong)).status).toBe(401);
      expect((await send("/hooks/wake", wrong)).status).toBe(429);
      const response = await fetch(`${other.url}/hooks/wake`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer wrong" },
        body: "{}",
      });
      expect(response.status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

/** @module Tests of one hook POST over real HTTP: headers, body, and how each answer is classified. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/openclaw-launch.mjs";
import { postToHook } from "../../src/mailbox/hook-poster.js";
import type { MailboxMessage } from "../../src/mailbox/message-extract.js";

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let base: string;
let seen: Seen[] = [];
/** The answer for the next request: status, extra headers, body. */
let answer: { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } = {
  status: 202,
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const { status, headers = {}, body: out = "", delayMs = 0 } = answer;
      setTimeout(() => res.writeHead(status, headers).end(out), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const messages: MailboxMessage[] = [
  { id: "9-1", from: "Ann <ann@example.org>", subject: "Hi", snippet: "Hello", body: "Hello there" },
];
const target = () => ({ url: `${base}/hooks/mailbox`, token: "tok-123", timeoutMs: 2_000 });

describe("postToHook", () => {
  it("POSTs the mailbox shape as JSON with the bearer token", async () => {
    seen = [];
    answer = { status: 202, body: '{"ok":true}' };
    expect(await postToHook(target(), messages)).toEqual({ kind: "delivered", status: 202 });
    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/hooks/mailbox");
    expect(request?.headers.authorization).toBe("Bearer tok-123");
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request?.body ?? "")).toEqual({ source: "mailbox", messages });
  });

  it.each([
    [200, "delivered"],
    [204, "delivered"],
    [408, "transient"],
    [429, "transient"],
    [500, "transient"],
    [503, "transient"],
    [400, "rejected"],
    [401, "rejected"],
    [404, "rejected"],
    [413, "rejected"],
  ])("classifies HTTP %i as %s", async (status, kind) => {
    answer = { status, body: status === 204 ? "" : "{}" };
    expect((await postToHook(target(), messages)).kind).toBe(kind);
  });

  it("explains a refusal with the gateway's code and sentence, nothing more", async () => {
    answer = {
      status: 401,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        ok: false,
        error: "Missing or wrong token.",
        code: "UNAUTHORIZED",
        echo: "secret",
      }),
    };
    expect(await postToHook(target(), messages)).toEqual({
      kind: "rejected",
      status: 401,
      reason: "HTTP 401 UNAUTHORIZED: Missing or wrong token.",
    });
  });

  it("reads Retry-After seconds", async () => {
    answer = { status: 429, headers: { "retry-after": "3" }, body: "{}" };
    expect(await postToHook(target(), messages)).toMatchObject({ kind: "transient", retryAfterMs: 3_000 });
  });

  it("treats a refused connection and a slow answer as transient", async () => {
    const closed = await postToHook({ ...target(), url: `http://127.0.0.1:${await freePort()}/x` }, messages);
    expect(closed).toMatchObject({ kind: "transient", reason: expect.stringMatching(/ECONNREFUSED/) });
    answer = { status: 200, delayMs: 500 };
    const slow = await postToHook({ ...target(), timeoutMs: 50 }, messages);
    expect(slow).toEqual({ kind: "transient", reason: "no answer within 50 ms" });
  });
});

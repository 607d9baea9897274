/** @module Per-hook rate limits over real HTTP: 429 RATE_LIMITED with Retry-After past the limit, per client or per hook, only authenticated requests counted, nothing accepted or used up by a refusal. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin, type HooksPluginOptions } from "../../src/index.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { MemoryStore } from "../../src/store/memory.js";
import { parseMetrics, sampleValue } from "../helpers/prometheus-text.js";
import { headFor, rawRequest } from "../helpers/raw-http.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "rate-limits-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const START = Date.UTC(2026, 0, 1);

let host: TestHost | undefined;
let plugin: ReturnType<typeof createHooksPlugin>;
/** A state directory of the test's own, which outlives the host so its journal can be read after the close. */
let stateDir: string | undefined;
/** The plugin's clock, which the memory store's windows follow: a test moves it instead of waiting. */
let now = START;
afterEach(async () => {
  await host?.close();
  host = undefined;
  now = START;
  if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  stateDir = undefined;
});

async function start(hooks: Record<string, unknown>, options: HooksPluginOptions = {}): Promise<TestHost> {
  plugin = createHooksPlugin({ clock: { now: () => now }, ...options });
  stateDir = mkdtempSync(path.join(tmpdir(), "hooks-rate-limits-"));
  host = await startTestHost(plugin, { hooks: { enabled: true, token: TOKEN, ...hooks } }, { stateDir });
  return host;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  replay: boolean;
  body: any;
}

async function post(hook: string, body: unknown, headers: Record<string, string> = AUTH): Promise<Answer> {
  const response = await fetch(`${host!.url}/hooks/${hook}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    replay: response.headers.get("idempotent-replay") === "true",
    body: text ? JSON.parse(text) : undefined,
  };
}

const wake = (headers?: Record<string, string>) => post("wake", { text: "ping" }, headers);
const statuses = async (count: number, send: () => Promise<Answer>) => {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await send()).status);
  return seen;
};
const from = (address: string, headers: Record<string, string> = AUTH) => ({
  ...headers,
  "x-forwarded-for": address,
});

describe("a hook's rate limit", () => {
  it("past the limit: 429 RATE_LIMITED with the seconds left in the window, and the next window passes again", async () => {
    await start({ limits: { wake: { rateLimit: { requests: 3, perSeconds: 60 } } } });
    expect(await statuses(3, () => wake())).toEqual([200, 200, 200]);
    now += 20_000;
    const refused = await wake();
    expect(refused).toMatchObject({ status: 429, retryAfter: "40" });
    expect(refused.body).toEqual({
      ok: false,
      code: "RATE_LIMITED",
      error: "This hook accepts at most 3 requests per 60 s from one address; retry in 40 s.",
    });
    // Refused on its headers: a body that never comes is not waited for.
    const head = headFor("/hooks/wake", {
      ...AUTH,
      "content-type": "application/json",
      "content-length": "100",
    });
    expect((await rawRequest(host!.url, head)).status).toBe(429);
    // /agent has no limit of its own, nor a default: it is not refused.
    expect((await post("agent", { message: "go" })).status).toBe(202);
    expect(host!.eventsOf("session:system-event")).toHaveLength(3);

    now += 40_000;
    expect(await statuses(4, () => wake())).toEqual([200, 200, 200, 429]);
    const metrics = parseMetrics(await plugin.metrics()!.metrics());
    expect(sampleValue(metrics, "hooks_rate_limited_total", { hook: "wake", mapping: "" })).toBe(3);
  });

  it('per: "client" gives each forwarded address its own budget; per: "hook" one for all', async () => {
    const mappings = ["client", "hook"].map((per) => ({
      id: `per-${per}`,
      match: { path: `per-${per}` },
      action: "wake",
      textTemplate: "{{text}}",
      rateLimit: { requests: 2, perSeconds: 60, per },
    }));
    await start({ trustedProxies: ["loopback"], mappings });
    const send = (hook: string, address: string) => () => post(hook, { text: "x" }, from(address));
    expect(await statuses(3, send("per-client", "203.0.113.1"))).toEqual([200, 200, 429]);
    expect(await statuses(3, send("per-client", "203.0.113.2"))).toEqual([200, 200, 429]);
    // An IPv6 client is its /64: another address in it shares the budget.
    expect(await statuses(2, send("per-client", "2001:db8:0:1::1"))).toEqual([200, 200]);
    expect((await send("per-client", "2001:db8:0:1::2")()).status).toBe(429);

    expect(await statuses(2, send("per-hook", "203.0.113.1"))).toEqual([200, 200]);
    const other = await send("per-hook", "203.0.113.2")();
    expect(other.status).toBe(429);
    expect(other.body.error).toBe("This hook accepts at most 2 requests per 60 s; retry in 60 s.");
  });

  it("counts only authenticated requests: wrong or missing credentials do not use up a sender's budget", async () => {
    await start({
      trustedProxies: ["loopback"],
      limits: { default: { rateLimit: { requests: 2, perSeconds: 60, per: "hook" } } },
      mappings: [
        {
          id: "github",
          match: { path: "github" },
          action: "wake",
          textTemplate: "push",
          verify: { scheme: "github", secret: "github-signing-secret" },
        },
      ],
    });
    const stranger = from("198.51.100.7", { authorization: "Bearer wrong" });
    expect(await statuses(5, () => wake(stranger))).toEqual([401, 401, 401, 401, 401]);
    expect(await statuses(2, () => post("github", {}, stranger))).toEqual([401, 401]);
    expect(await statuses(3, () => wake(from("203.0.113.1")))).toEqual([200, 200, 429]);
    // The signed path's budget was not touched by the failed signatures either. Bodies differ: GitHub signs no
    // timestamp, so a repeated body would be a duplicate, answered before any budget is counted.
    let push = 0;
    expect(await statuses(3, () => post("github", { push: ++push }, from("203.0.113.1")))).toEqual([
      200, 200, 429,
    ]);
  });

  it("hooks.limits.default applies to a mapping without its own and to /agent; a mapping's own and wake's own win", async () => {
    await start({
      limits: {
        default: { rateLimit: { requests: 1, perSeconds: 60 } },
        wake: { rateLimit: { requests: 3, perSeconds: 60 } },
      },
      mappings: [
        { id: "plain", match: { path: "plain" }, action: "wake", textTemplate: "x" },
        {
          id: "own",
          match: { path: "own" },
          action: "wake",
          textTemplate: "x",
          rateLimit: { requests: 2, perSeconds: 60 },
        },
      ],
      presets: ["mailbox"],
    });
    expect(await statuses(2, () => post("plain", {}))).toEqual([200, 429]);
    expect(await statuses(3, () => post("own", {}))).toEqual([200, 200, 429]);
    expect(await statuses(4, () => wake())).toEqual([200, 200, 200, 429]);
    expect(await statuses(2, () => post("agent", { message: "go" }))).toEqual([202, 429]);
    // Mappings count apart, even where one limit applies to both: the preset has the default's budget of its own.
    const mail = {
      source: "mailbox",
      messages: [{ id: "m1", from: "a@example.org", subject: "Hi", snippet: "hello" }],
    };
    expect(await statuses(2, () => post("mailbox", mail))).toEqual([202, 429]);
  });

  it("refuses a mapping's request before its transform runs", async () => {
    const ran: string[] = [];
    await start(
      {
        transformsDir: "/tmp/elsewhere",
        mappings: [
          {
            id: "coded",
            match: { path: "coded" },
            transform: { module: "any.ts" },
            rateLimit: { requests: 1, perSeconds: 5 },
          },
        ],
      },
      {
        transformRunner: () => ({
          async load() {},
          async run(_transform, context) {
            ran.push(String((context.payload as { n: number }).n));
            return { kind: "wake", text: "from the transform" };
          },
          async close() {},
        }),
      },
    );
    expect((await post("coded", { n: 1 })).status).toBe(200);
    const refused = await post("coded", { n: 2 });
    expect(refused).toMatchObject({ status: 429, retryAfter: "5" });
    expect(refused.body.error).toBe(
      "This hook accepts at most 1 request per 5 s from one address; retry in 5 s.",
    );
    expect(ran).toEqual(["1"]);
    const metrics = parseMetrics(await plugin.metrics()!.metrics());
    expect(sampleValue(metrics, "hooks_rate_limited_total", { hook: "coded", mapping: "coded" })).toBe(1);
  });

  it("a 429 is listed as a refusal, not accepted; its delivery id is accepted on the retry after the window", async () => {
    await start({
      limits: { default: { rateLimit: { requests: 1, perSeconds: 30 } } },
      mappings: [{ id: "keyed", match: { path: "keyed" }, action: "wake", textTemplate: "{{n}}" }],
    });
    for (const hook of ["wake", "keyed"]) {
      const send = (key: string, text: string) =>
        post(hook, { text, n: text }, { ...AUTH, "idempotency-key": `${hook}-${key}` });
      expect(await send("first", "1")).toMatchObject({ status: 200, replay: false });
      expect((await send("second", "2")).status).toBe(429);
    }
    now += 30_000;
    for (const hook of ["wake", "keyed"]) {
      const retried = await post(
        hook,
        { text: "2", n: "2" },
        { ...AUTH, "idempotency-key": `${hook}-second` },
      );
      expect(retried).toMatchObject({ status: 200, replay: false });
    }
    expect(host!.eventsOf("session:system-event").map((event) => event.raw)).toEqual(["1", "1", "2", "2"]);
    await host!.close();
    host = undefined;
    const entries = await readJournal(path.join(stateDir!, "hooks-journal"));
    expect(
      entries.map((entry) => [entry.hook, entry.status, entry.state, entry.code, entry.mappingId]),
    ).toEqual([
      ["wake", 200, "done", undefined, undefined],
      ["wake", 429, "refused", "RATE_LIMITED", undefined],
      ["keyed", 200, "done", undefined, "keyed"],
      ["keyed", 429, "refused", "RATE_LIMITED", "keyed"],
      ["wake", 200, "done", undefined, undefined],
      ["keyed", 200, "done", undefined, "keyed"],
    ]);
  });

  it.each([
    ["wake", { text: "ping" }, 200],
    ["agent", { message: "go" }, 202],
    ["keyed", { text: "ping" }, 200],
  ])(
    "a retry of an accepted request to %s gets its first answer, not 429, and spends no budget",
    async (hook, body, status) => {
      await start({
        limits: { default: { rateLimit: { requests: 2, perSeconds: 60 } } },
        mappings: [{ id: "keyed", match: { path: "keyed" }, action: "wake", textTemplate: "{{text}}" }],
      });
      const send = (key: string) => post(hook, body, { ...AUTH, "idempotency-key": key });
      expect(await send("a")).toMatchObject({ status, replay: false });
      for (let retry = 0; retry < 3; retry++) expect(await send("a")).toMatchObject({ status, replay: true });
      expect(await send("b")).toMatchObject({ status, replay: false });
      // The budget is used up now; a retry is still answered as the duplicate it is.
      expect(await send("a")).toMatchObject({ status, replay: true });
      expect(await send("c")).toMatchObject({ status: 429, retryAfter: "60" });
    },
  );

  it("a reload to a shorter window counts in the new window at once, not in the old one's day", async () => {
    const hooks = (perSeconds: number) => ({
      enabled: true,
      token: TOKEN,
      limits: { wake: { rateLimit: { requests: 1, perSeconds } } },
    });
    await start(hooks(86_400));
    expect((await wake()).status).toBe(200);
    expect(await wake()).toMatchObject({ status: 429, retryAfter: "86400" });
    const reload = await plugin.prepareReload({ hooks: hooks(60) });
    expect(reload.issues).toEqual([]);
    reload.apply();
    expect((await wake()).status).toBe(200);
    expect(await wake()).toMatchObject({ status: 429, retryAfter: "60" });
    // Back to the day: its counter still holds what that window counted.
    const back = await plugin.prepareReload({ hooks: hooks(86_400) });
    back.apply();
    expect(await wake()).toMatchObject({ status: 429, retryAfter: "86400" });
  });

  it("lets requests through when the store cannot count, and says so in the log and the metrics", async () => {
    const store = new MemoryStore();
    store.increment = async () => {
      throw new Error("store down");
    };
    await start({ limits: { wake: { rateLimit: { requests: 1, perSeconds: 60 } } } }, { store });
    expect(await statuses(3, () => wake())).toEqual([200, 200, 200]);
    const warnings = host!.logs.filter((line) => line.message.startsWith("rate limits cannot be counted"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain("store down");
    const metrics = parseMetrics(await plugin.metrics()!.metrics());
    expect(sampleValue(metrics, "hooks_store_failures_total", { operation: "rate" })).toBe(3);
    expect(sampleValue(metrics, "hooks_rate_limited_total", { hook: "wake", mapping: "" })).toBeUndefined();
  });
});

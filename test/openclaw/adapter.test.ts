/** @module The OpenClaw adapter on a stand-in of OpenClaw's API: config, registration modes, the four effects, logs. */
import { afterEach, describe, expect, it } from "vitest";
import openclawPlugin from "../../src/openclaw/index.js";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import { METRICS_PATH } from "../../src/openclaw/metrics-route.js";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { servePlugin } from "../helpers/openclaw-plugin-server.js";

const TOKEN = "oc-test-token-0123456789abcdef0123";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Serves the plugin on the fake; stopped after the test, unless the test stops it itself (`stopsItself`). */
async function serve(fake: FakeOpenClaw, { stopsItself = false } = {}) {
  const server = await servePlugin(fake);
  if (!stopsItself) cleanups.push(server.stop);
  const post = (hook: string, body: unknown, token = TOKEN, idempotencyKey?: string) =>
    fetch(`${server.url}/intake/${hook}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      },
      body: JSON.stringify(body),
    });
  return { post, stop: server.stop };
}

const enabled = (extra: Record<string, unknown> = {}) => ({
  enabled: true,
  token: TOKEN,
  path: "/intake",
  ...extra,
});
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("OpenClaw adapter: registration", () => {
  it("registers the intake's prefix route with plugin auth, the inspector's with gateway auth, and one service, in full mode", () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    openclawPlugin.register(fake.api);
    expect(fake.routes.map(({ path, match, auth }) => ({ path, match, auth }))).toEqual([
      { path: "/intake", match: "prefix", auth: "plugin" },
      { path: INSPECTOR_PATH, match: "prefix", auth: "gateway" },
      { path: METRICS_PATH, match: "exact", auth: "gateway" },
    ]);
    expect(fake.services.map((service) => service.id)).toEqual(["hooks-intake"]);
  });

  it.each(["discovery", "tool-discovery", "cli-metadata"])(
    "in %s mode: lists the route, which refuses work, runs nothing, and checks the config",
    async (mode) => {
      const fake = fakeOpenClaw({ pluginConfig: enabled(), registrationMode: mode });
      openclawPlugin.register(fake.api);
      expect(fake.routes.map((route) => route.path)).toEqual(["/intake", INSPECTOR_PATH, METRICS_PATH]);
      expect(fake.services).toEqual([]);
      expect(fake.tools).toEqual([]);
      const server = await fake.listen();
      cleanups.push(server.close);
      const response = await fetch(`${server.url}/intake/wake`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "lost?" }),
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(await response.json()).toMatchObject({ ok: false, code: "UNAVAILABLE" });
      expect(fake.queue.drain("agent:main:main")).toEqual([]);
      const broken = fakeOpenClaw({ pluginConfig: { enabled: true }, registrationMode: mode });
      expect(() => openclawPlugin.register(broken.api)).toThrow(
        /plugins\.entries\.hooks-intake\.config\.token/,
      );
    },
  );

  it("registers nothing when the plugin's own enabled is not true", () => {
    const fake = fakeOpenClaw({ pluginConfig: { token: TOKEN } });
    openclawPlugin.register(fake.api);
    expect(fake.routes).toEqual([]);
    // Inside OpenClaw `hooks.enabled` is OpenClaw's own switch: the line names the plugin's key.
    expect(fake.logs).toContainEqual(
      expect.stringContaining("set plugins.entries.hooks-intake.config.enabled to true"),
    );
  });

  it("names config problems by the keys written in OpenClaw's config", () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled({ maxBodyBytes: "big", mappingz: [] }) });
    expect(() => openclawPlugin.register(fake.api)).toThrow(
      /plugins\.entries\.hooks-intake\.config\.maxBodyBytes[\s\S]*plugins\.entries\.hooks-intake\.config\.mappingz/,
    );
  });

  it("refuses a hook token equal to OpenClaw's gateway token", () => {
    const fake = fakeOpenClaw({ config: { gateway: { auth: { token: TOKEN } } }, pluginConfig: enabled() });
    expect(() => openclawPlugin.register(fake.api)).toThrow(/must differ from gateway\.auth\.token/);
  });

  it.each([
    ["/hooks", "/hooks"],
    ["/hooks/intake", "/hooks"],
    ["/hooks", "/hooks/"],
    ["/api", "/api/hooks"],
  ])("refuses path %s while OpenClaw's built-in hooks serve %s, naming both keys", (ours, theirs) => {
    const fake = fakeOpenClaw({
      config: { hooks: { enabled: true, token: "x".repeat(32), path: theirs } },
      pluginConfig: enabled({ path: ours }),
    });
    expect(() => openclawPlugin.register(fake.api)).toThrow(
      /plugins\.entries\.hooks-intake\.config\.path[\s\S]*overlaps OpenClaw's built-in hooks at hooks\.path[\s\S]*hooks\.enabled/,
    );
  });

  it.each([
    [{ hooks: { enabled: true, token: "x".repeat(32) } }, "/intake"],
    [{ hooks: { enabled: true, token: "x".repeat(32), path: "/hooksy" } }, "/hooks"],
    [{ hooks: { enabled: false } }, "/hooks"],
    [{}, "/hooks"],
  ])("serves beside OpenClaw's built-in hooks when the paths do not overlap (%j, %s)", (config, ours) => {
    const fake = fakeOpenClaw({ config, pluginConfig: enabled({ path: ours }) });
    openclawPlugin.register(fake.api);
    expect(fake.routes.map((route) => route.path)).toEqual([ours, INSPECTOR_PATH, METRICS_PATH]);
  });
});

describe("OpenClaw adapter: effects", () => {
  it("a wake reaches OpenClaw's main session queue; mode now asks for an immediate heartbeat", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    const { post } = await serve(fake);
    expect((await post("wake", { text: "first", mode: "next-heartbeat" })).status).toBe(200);
    expect(fake.heartbeats).toEqual([]);
    expect((await post("wake", { text: "second", mode: "now" })).status).toBe(200);
    expect(fake.heartbeats).toEqual([
      { source: "hook", intent: "immediate", reason: expect.any(String), agentId: "main" },
    ]);
    const queued = fake.queue.drain("agent:main:main");
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatch(/first[\s\S]*second/);
  });

  it("30 wakes then one with mode now: all 31 are in the queue OpenClaw drains", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    const { post } = await serve(fake);
    for (let i = 1; i <= 30; i++) await post("wake", { text: `wake number ${i}.`, mode: "next-heartbeat" });
    await post("wake", { text: "wake number 31.", mode: "now" });
    const text = fake.queue.drain("agent:main:main").join("\n");
    for (let i = 1; i <= 31; i++) expect(text).toContain(`wake number ${i}.`);
  });

  it("a mapping's instructions reach OpenClaw before the safety wrapper, which is not wrapped again", async () => {
    const instructions = "Summarise the alert below in one line.";
    const fake = fakeOpenClaw({
      pluginConfig: enabled({
        mappings: [
          { id: "alert", match: { path: "alert" }, action: "wake", instructions, textTemplate: "{{msg}}" },
          {
            id: "triage",
            match: { path: "triage" },
            instructions,
            messageTemplate: "{{msg}}",
            deliver: false,
          },
        ],
      }),
    });
    const { post } = await serve(fake);
    expect((await post("alert", { msg: "disk full" })).status).toBe(200);
    expect((await post("triage", { msg: "CPU at 99%" })).status).toBe(202);
    const [queued] = fake.queue.drain("agent:main:main");
    expect(queued).toMatch(
      /^Summarise the alert below in one line\.\n\nSECURITY NOTICE[\s\S]*disk full\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[^"]+">>>$/,
    );
    expect(queued?.match(/SECURITY NOTICE/g)).toHaveLength(1);
    await expect.poll(() => fake.runs.length).toBe(1);
    expect(fake.runs[0]?.message).toMatch(
      /^Summarise the alert below in one line\.\n\nSECURITY NOTICE[\s\S]*CPU at 99%/,
    );
  });

  it("an agent turn runs as a subagent run and its reply is summarised into the main session", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    let waits = 0;
    fake.waitResult = () =>
      ++waits < 3
        ? { status: "pending" }
        : { status: "ok", terminalReply: { disposition: "visible", text: "All green." } };
    const { post } = await serve(fake);
    const response = await post("agent", { message: "check the build", name: "CI", wakeMode: "now" });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    await expect.poll(() => fake.queue.queues.get("agent:main:main")?.length ?? 0).toBe(1);
    expect(fake.runs).toEqual([
      expect.objectContaining({
        deliver: false,
        idempotencyKey: runId,
        message: expect.stringContaining("check the build"),
      }),
    ]);
    // Isolated by default: a session of its own under the key, scoped to the default agent.
    expect(fake.runs[0]?.sessionKey).toMatch(/^agent:main:hook:[^:]+:run:[^:]+$/);
    expect(fake.queue.drain("agent:main:main")[0]).toMatch(/^SECURITY NOTICE[\s\S]*\nCI: [\s\S]*All green\./);
    expect(fake.heartbeats).toHaveLength(1);
  });

  it("a model override is passed as OpenClaw's provider and model fields", async () => {
    const fake = fakeOpenClaw({
      config: { agents: { defaults: { models: { "stub/fast": {} } } } },
      pluginConfig: enabled(),
    });
    fake.waitResult = () => ({ status: "ok", terminalReply: { disposition: "silent" } });
    const { post } = await serve(fake);
    expect((await post("agent", { message: "hi", model: "stub/fast" })).status).toBe(202);
    expect((await post("agent", { message: "hi", model: "other/slow" })).status).toBe(400);
    await expect.poll(() => fake.queue.queues.get("agent:main:main")?.length ?? 0).toBe(1);
    expect(fake.queue.drain("agent:main:main")[0]).toMatch(/\(no reply\)/);
    expect(fake.runs[0]).toMatchObject({ provider: "stub", model: "fast" });
  });

  it("a turn aimed at an agent's main session is refused before it is accepted: 502, nothing started", async () => {
    // Only the operator can write such a key (a caller's `agent:…` key is refused): a mapping's fixed one.
    const fake = fakeOpenClaw({
      pluginConfig: enabled({
        allowedSessionKeyPrefixes: [],
        mappings: [
          {
            match: { path: "into-main" },
            messageTemplate: "hi",
            sessionKey: "agent:main:main",
            sessionMode: "persistent",
          },
        ],
      }),
    });
    const { post } = await serve(fake);
    const response = await post("into-main", {});
    expect(response.status).toBe(502);
    expect(((await response.json()) as { code: string }).code).toBe("TURN_REFUSED");
    expect(fake.runs).toEqual([]);
  });

  it("a turn is answered 202 only once OpenClaw accepted its run, in the service's context, not the sender's request", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    const run = fake.api.runtime.subagent.run;
    const scopes: Array<string | undefined> = [];
    fake.api.runtime.subagent.run = async (params) => {
      scopes.push(fake.requestScope.getStore());
      return run(params);
    };
    const { post } = await serve(fake);
    const response = await post("agent", { message: "hi" });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([runId]);
    expect(scopes.length).toBeGreaterThanOrEqual(1);
    expect(scopes.every((scope) => scope === undefined)).toBe(true);
  });

  it.each([
    [
      'Session "agent:main:hook:x" is archived. Restore it before starting new work.',
      409,
      "SESSION_CONFLICT",
    ],
    ["missing scope: operator.write", 502, "TURN_REFUSED"],
    ["Gateway is draining; new tasks are not accepted", 503, "TURN_NOT_ADMITTED"],
  ])(
    "OpenClaw refusing the run (%s) is %i %s, and the sender's retry runs it once",
    async (message, status, code) => {
      const fake = fakeOpenClaw({ pluginConfig: enabled() });
      const run = fake.api.runtime.subagent.run;
      let refusals = 1;
      fake.api.runtime.subagent.run = async (params) => {
        if (refusals-- > 0) throw new Error(message);
        return run(params);
      };
      fake.waitResult = () => ({
        status: "ok",
        terminalReply: { disposition: "visible", text: "Second try." },
      });
      const { post } = await serve(fake);
      const refused = await post("agent", { message: "hi", name: "Job" }, TOKEN, "job-1");
      const body = (await refused.json()) as { code: string; error: string };
      expect([refused.status, body.code]).toEqual([status, code]);
      // A refusal's own words (which can name the gateway's rights) are not told to the sender.
      if (status === 502) expect(body.error).not.toContain("operator.write");
      expect(refused.headers.get("retry-after")).toBe(status === 503 ? "10" : null);
      expect(fake.runs).toEqual([]);
      expect((await post("agent", { message: "hi", name: "Job" }, TOKEN, "job-1")).status).toBe(202);
      await expect
        .poll(() => fake.queue.queues.get("agent:main:main")?.length ?? 0, { timeout: 5_000 })
        .toBe(1);
      expect(fake.queue.drain("agent:main:main")[0]).toMatch(
        /^SECURITY NOTICE[\s\S]*\nJob: [\s\S]*Second try\./,
      );
      expect(fake.runs).toHaveLength(1);
    },
  );

  it("a failing run is reported as an error summary", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    fake.waitResult = () => ({ status: "error", error: "No route-compatible authentication source" });
    const { post } = await serve(fake);
    await post("agent", { message: "hi", name: "Job" });
    await expect.poll(() => fake.queue.queues.get("agent:main:main")?.length ?? 0).toBe(1);
    expect(fake.queue.drain("agent:main:main")[0]).toMatch(
      /^SECURITY NOTICE[\s\S]*\nJob \(error\): [\s\S]*No route-compatible/,
    );
  });

  it("delivers through a configured channel, and logs a failure for one OpenClaw has not configured", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    fake.adapters.set("telegram", { sendText: () => ({ ok: true }) });
    fake.waitResult = () => ({ status: "ok", terminalReply: { disposition: "visible", text: "Deployed." } });
    const { post } = await serve(fake);
    const statuses = [
      (await post("agent", { message: "a", deliver: true, channel: "telegram", to: "@opsteam" })).status,
      (await post("agent", { message: "b", deliver: true, channel: "signal", to: "+15550001111" })).status,
    ];
    expect(statuses).toEqual([202, 202]);
    await expect
      .poll(() => fake.logs.filter((line) => line.includes("signal")).join("\n"))
      .toMatch(/error delivery failed: channel "signal" is not configured in OpenClaw/);
    await expect.poll(() => fake.sent).toEqual([{ channel: "telegram", to: "@opsteam", text: "Deployed." }]);
  });

  it("a wrong token is 401 and no log line holds the token", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    const { post } = await serve(fake);
    expect((await post("wake", { text: "x" }, "wrong-token-wrong-token-wrong")).status).toBe(401);
    // A token in the query string is accepted with a warning: a log line about the token, which must not hold it.
    const second = await fake.listen();
    cleanups.push(second.close);
    const url = second.url;
    const viaQuery = await fetch(`${url}/intake/wake?token=${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "ok" }),
    });
    expect(viaQuery.status).toBe(200);
    await flush();
    expect(fake.logs).toContainEqual(expect.stringMatching(/^warn .*query string/));
    expect(fake.logs.join("\n")).not.toContain(TOKEN);
    expect(fake.logs.join("\n")).not.toContain("wrong-token-wrong-token-wrong");
  });

  it("before the service starts and after it stops, the route refuses work with 503 instead of losing it", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    openclawPlugin.register(fake.api);
    const service = fake.services[0]!;
    const server = await fake.listen();
    cleanups.push(server.close);
    const wake = () =>
      fetch(`${server.url}/intake/wake`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "when?" }),
      });
    const early = await wake();
    expect([early.status, early.headers.get("retry-after")]).toEqual([503, "5"]);
    await service.start({});
    expect((await wake()).status).toBe(200);
    await service.stop?.({});
    const late = await wake();
    expect([late.status, late.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(fake.queue.drain("agent:main:main")).toHaveLength(1);
  });

  it("a service started twice still hands each event over once", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    openclawPlugin.register(fake.api);
    const service = fake.services[0]!;
    await service.start({});
    await service.start({});
    const server = await fake.listen();
    cleanups.push(async () => {
      await server.close();
      await service.stop?.({});
    });
    const response = await fetch(`${server.url}/intake/wake`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "once", mode: "now" }),
    });
    expect(response.status).toBe(200);
    expect(fake.heartbeats).toHaveLength(1);
  });
});

describe("OpenClaw adapter: metrics", () => {
  it("serves the plugin's registry as Prometheus text on its gateway-auth route, counting the intake's requests", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled() });
    const { post } = await serve(fake);
    expect((await post("wake", { text: "counted" })).status).toBe(200);
    const server = await fake.listen();
    cleanups.push(server.close);
    const scrape = await fetch(`${server.url}${METRICS_PATH}`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(text).toMatch(/^hooks_requests_total\{[^}]*hook="wake"[^}]*status="200"[^}]*\} 1$/m);
    expect(text).not.toContain(TOKEN);
    expect((await fetch(`${server.url}${METRICS_PATH}`, { method: "POST" })).status).toBe(405);
  });

  it.each(["/plugins/hooks-intake/metrics", "/plugins/hooks-intake/metrics/x"])(
    "an intake path over or under the metrics route (%s) is a config error naming the key",
    (intakePath) => {
      const fake = fakeOpenClaw({ pluginConfig: enabled({ path: intakePath }) });
      expect(() => openclawPlugin.register(fake.api)).toThrow(
        /plugins\.entries\.hooks-intake\.config\.path: .*overlaps the metrics route/,
      );
    },
  );
});

describe("OpenClaw adapter: turns past maxConcurrentTurns", () => {
  it("starts a waiting turn in OpenClaw only when it leaves the queue, and a refusal then is the turn's outcome", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled({ limits: { agent: { maxConcurrentTurns: 1 } } }) });
    const done = new Set<string>();
    fake.waitResult = (runId) =>
      done.has(runId)
        ? { status: "ok", terminalReply: { disposition: "visible", text: `done ${runId}` } }
        : { status: "pending" };
    const run = fake.api.runtime.subagent.run;
    const refused = new Set<string>();
    fake.api.runtime.subagent.run = async (params) => {
      if (refused.has(params.idempotencyKey ?? "")) throw new Error('Session "x" is archived.');
      return run(params);
    };
    const { post } = await serve(fake);
    const answer = async (body: unknown) => {
      const response = await post("agent", body);
      return {
        status: response.status,
        body: (await response.json()) as { runId: string; queued?: boolean },
      };
    };
    const first = await answer({ message: "first", name: "First" });
    const second = await answer({ message: "second", name: "Second" });
    const third = await answer({ message: "third", name: "Third" });
    expect([first.status, second.status, third.status]).toEqual([202, 202, 202]);
    expect([first.body.queued, second.body.queued, third.body.queued]).toEqual([undefined, true, true]);
    // Admitting is starting: the waiting turns are not in OpenClaw yet.
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([first.body.runId]);

    refused.add(third.body.runId);
    done.add(first.body.runId);
    await expect
      .poll(() => fake.runs.map((accepted) => accepted.idempotencyKey), { timeout: 5_000 })
      .toEqual([first.body.runId, second.body.runId]);
    done.add(second.body.runId);
    // The third is admitted as the second ends; OpenClaw refuses it, and that is its summary, not an HTTP answer.
    // Summaries waiting for the same heartbeat are handed to OpenClaw as one event.
    const queued = () =>
      (fake.queue.queues.get("agent:main:main") ?? []).map((event) => event.text).join("\n");
    await expect.poll(queued, { timeout: 5_000 }).toMatch(/\nThird \(error\)/);
    const text = queued();
    expect(text).toMatch(/\nFirst: [\s\S]*done /);
    expect(text).toMatch(/\nSecond: [\s\S]*done /);
    expect(text).toMatch(/\nThird \(error\): not started: The agent turn's session is not free for it/);
    expect(fake.runs).toHaveLength(2);
  });
});

/** OpenClaw refusing new work while it drains for a restart or reload, with the pause it asks for. */
const draining = (retryAfterMs?: number) =>
  Object.assign(new Error("Gateway is draining; new tasks are not accepted"), { retryAfterMs });

/**
 * A fake OpenClaw at a cap of one `/agent` turn: a run is `pending` until the test ends it, and `refuse` decides, per
 * call, whether OpenClaw refuses a run (its error) or accepts it. `calls` holds each call's idempotency key and time.
 */
function cappedOpenClaw(extra: { stateDir?: string } = {}) {
  const fake = fakeOpenClaw({
    pluginConfig: enabled({ limits: { agent: { maxConcurrentTurns: 1 } } }),
    ...extra,
  });
  const done = new Set<string>();
  fake.waitResult = (runId) =>
    done.has(runId)
      ? { status: "ok", terminalReply: { disposition: "visible", text: `done ${runId}` } }
      : { status: "pending" };
  const calls: Array<{ key: string; at: number }> = [];
  const control = {
    fake,
    done,
    calls,
    refuse: (_key: string): Error | Promise<void> | undefined => undefined,
  };
  const run = fake.api.runtime.subagent.run;
  fake.api.runtime.subagent.run = async (params) => {
    const key = params.idempotencyKey ?? "";
    calls.push({ key, at: Date.now() });
    const refusal = control.refuse(key);
    if (refusal instanceof Error) throw refusal;
    await refusal;
    return run(params);
  };
  return control;
}

async function postTurn(post: Awaited<ReturnType<typeof serve>>["post"], body: Record<string, unknown>) {
  const response = await post("agent", body);
  expect(response.status).toBe(202);
  return (await response.json()) as { runId: string; queued?: boolean };
}

const mainQueue = (fake: FakeOpenClaw) =>
  (fake.queue.queues.get("agent:main:main") ?? []).map((event) => event.text).join("\n");

describe("OpenClaw adapter: a waiting turn OpenClaw is not admitting now", () => {
  it("is asked again after the pause OpenClaw names, and runs once, with no 'not started' summary", async () => {
    const control = cappedOpenClaw();
    const { fake, done, calls } = control;
    const { post } = await serve(fake);
    const first = await postTurn(post, { message: "first", name: "First" });
    const second = await postTurn(post, { message: "second", name: "Second" });
    expect(second.queued).toBe(true);
    // First a pause too short to keep (1 ms: a second at least, never a busy loop), then one of OpenClaw's own.
    const pauses = [1, 1_500];
    control.refuse = (key) =>
      key === second.runId && pauses.length > 0 ? draining(pauses.shift()) : undefined;
    done.add(first.runId);
    await expect
      .poll(() => fake.runs.map((accepted) => accepted.idempotencyKey), { timeout: 5_000 })
      .toEqual([first.runId, second.runId]);
    done.add(second.runId);
    await expect.poll(() => mainQueue(fake), { timeout: 5_000 }).toMatch(/\nSecond: [\s\S]*done /);
    expect(mainQueue(fake)).not.toContain("not started");
    const asked = calls.filter((call) => call.key === second.runId).map((call) => call.at);
    // Two refusals, the admission, and the start that finds the run OpenClaw accepted.
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(950);
    expect(asked[1]! - asked[0]!).toBeLessThan(1_400);
    // OpenClaw's 1.5 s, not the plugin's own pause of a second.
    expect(asked[2]! - asked[1]!).toBeGreaterThanOrEqual(1_450);
  });

  it("a session between states (OpenClaw's restart) is asked again too; it runs once", async () => {
    const control = cappedOpenClaw();
    const { fake, done } = control;
    const { post } = await serve(fake);
    const first = await postTurn(post, { message: "first", name: "First" });
    const second = await postTurn(post, { message: "second", name: "Second" });
    let refusals = 1;
    control.refuse = (key) =>
      key === second.runId && refusals-- > 0
        ? new Error(`Session "agent:main:${key}" is still initializing`)
        : undefined;
    done.add(first.runId);
    done.add(second.runId);
    await expect.poll(() => mainQueue(fake), { timeout: 5_000 }).toMatch(/\nSecond: [\s\S]*done /);
    expect(mainQueue(fake)).not.toContain("not started");
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([first.runId, second.runId]);
  });

  it("is ended at its own timeoutSeconds with a summary that says it was never started", async () => {
    const control = cappedOpenClaw();
    const { fake, done, calls } = control;
    const { post } = await serve(fake);
    const first = await postTurn(post, { message: "first", name: "First" });
    const second = await postTurn(post, { message: "second", name: "Second", timeoutSeconds: 2 });
    control.refuse = (key) => (key === second.runId ? draining(200) : undefined);
    done.add(first.runId);
    await expect
      .poll(() => mainQueue(fake), { timeout: 5_000 })
      .toMatch(/\nSecond \(error\): not started within 2 s: The gateway is not admitting agent turns now/);
    expect(calls.filter((call) => call.key === second.runId).length).toBeGreaterThan(1);
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([first.runId]);
  });

  it.each([
    ["while OpenClaw drains", () => draining(50)],
    ["while OpenClaw is still admitting it", () => new Promise<void>(() => undefined)],
  ])("left %s when the service stops, it runs at the next start, once", async (_, refusal) => {
    const control = cappedOpenClaw();
    const { fake, done, calls } = control;
    const served = await serve(fake, { stopsItself: true });
    const { post } = served;
    const first = await postTurn(post, { message: "first", name: "First" });
    const second = await postTurn(post, { message: "second", name: "Second" });
    control.refuse = (key) => (key === second.runId ? refusal() : undefined);
    done.add(first.runId);
    await expect.poll(() => calls.some((call) => call.key === second.runId), { timeout: 5_000 }).toBe(true);
    await served.stop();
    expect(mainQueue(fake)).not.toContain("Second");

    const again = cappedOpenClaw({ stateDir: fake.stateDir });
    again.done.add(second.runId);
    await serve(again.fake);
    await expect.poll(() => mainQueue(again.fake), { timeout: 5_000 }).toMatch(/\nSecond: [\s\S]*done /);
    expect(mainQueue(again.fake)).not.toMatch(/Second \(error\)/);
    expect(again.fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([second.runId]);
  });
});

describe("OpenClaw adapter: a waiting turn OpenClaw takes while the plugin stops", () => {
  it("is marked handed: the next start reports it interrupted and does not run it again", async () => {
    const control = cappedOpenClaw();
    const { fake, done, calls } = control;
    const served = await serve(fake, { stopsItself: true });
    const { post } = served;
    const first = await postTurn(post, { message: "first", name: "First" });
    const second = await postTurn(post, { message: "second", name: "Second" });
    // OpenClaw answers the second's admission only once the plugin has begun to stop: it runs there.
    let admit: () => void = () => undefined;
    const admitted = new Promise<void>((resolve) => {
      admit = resolve;
    });
    control.refuse = (key) => (key === second.runId ? admitted : undefined);
    done.add(first.runId);
    await expect.poll(() => calls.some((call) => call.key === second.runId), { timeout: 5_000 }).toBe(true);
    // The service's stop drains first, at once: the admission answered after it finds the turn's slot closed.
    const stopped = fake.services[0]!.stop?.({});
    admit();
    await stopped;
    await served.stop();
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([first.runId, second.runId]);

    const again = cappedOpenClaw({ stateDir: fake.stateDir });
    await serve(again.fake);
    await expect
      .poll(() => mainQueue(again.fake), { timeout: 5_000 })
      .toMatch(/\nSecond \(error\): interrupted by a restart/);
    expect(again.fake.runs).toHaveLength(0);
  });
});

describe("OpenClaw adapter: stopping with turns waiting", () => {
  it("starts no waiting turn while it stops, even as running ones end; the next start runs it", async () => {
    const { fake, done } = cappedOpenClaw();
    openclawPlugin.register(fake.api);
    const service = fake.services[0]!;
    await service.start({});
    const server = await fake.listen();
    cleanups.push(server.close);
    const post = (body: unknown) =>
      fetch(`${server.url}/intake/agent`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // A caller waiting for the first turn keeps a request in flight, which the stop lets finish.
    const waiting = post({ message: "first", name: "First", waitForCompletion: true });
    await expect.poll(() => fake.runs.length).toBe(1);
    const first = fake.runs[0]!.idempotencyKey!;
    const second = (await (await post({ message: "second", name: "Second" })).json()) as { runId: string };
    const stopped = service.stop?.({});
    done.add(first);
    expect((await waiting).status).toBe(200);
    await stopped;
    expect(fake.runs.map((accepted) => accepted.idempotencyKey)).toEqual([first]);

    const again = cappedOpenClaw({ stateDir: fake.stateDir });
    again.done.add(second.runId);
    await serve(again.fake);
    await expect.poll(() => mainQueue(again.fake), { timeout: 5_000 }).toMatch(/\nSecond: [\s\S]*done /);
  });
});

import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createHooksPlugin } from "../../src/index.js";
import { createTransformRunner } from "../../src/mapping/create-transform-runner.js";
import { NO_METRICS } from "../../src/metrics/metrics.js";
import { loadAllTransforms, prepareHooks } from "../../src/prepare-hooks.js";
import { REPO_ROOT, readPayload, TRANSFORMS_DIR } from "../helpers/repo.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "transform-test-token-0123456789abcd";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let host: TestHost;
const temps: string[] = [];
afterEach(async () => {
  await host?.close();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(
  mappings: MappingInput[],
  hooks: Record<string, unknown> = {},
  transformTimeoutMs = 300,
) {
  host = await startTestHost(
    createHooksPlugin({ transformTimeoutMs }),
    { hooks: { enabled: true, token: TOKEN, transformsDir: "fixtures/transforms", mappings, ...hooks } },
    { configDir: REPO_ROOT },
  );
}
const hook = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  post(`${host.url}/hooks/${name}`, body, { ...AUTH, ...headers });

/** The mappings prepared as the plugin would, against the fixture transforms. */
function prepareFixtureMappings(mappings: MappingInput[]) {
  const { prepared } = prepareHooks(
    { hooks: { enabled: true, token: TOKEN, transformsDir: "fixtures/transforms", mappings } },
    { configDir: REPO_ROOT },
  );
  if (!prepared) throw new Error("the test mappings did not prepare");
  return prepared;
}

describe("transforms", () => {
  it("runs a TypeScript transform with interfaces and generics on a real GitHub push", async () => {
    await start([{ id: "push", match: { path: "github/push" }, transform: { module: "github-push.ts" } }]);
    const response = await hook("github/push", readPayload("github/push.json"));
    expect(response.status).toBe(202);
    expect(response.body.sessionKey).toBe("hook:github:Codertocat/Hello-World");
    expect(host.eventsOf("session:agent-turn")[0]).toMatchObject({
      name: "GitHub",
      raw: "Codertocat pushed 1 commit(s) to Codertocat/Hello-World@master: Initial commit [push]",
    });
  });

  it("skips with 204 when the transform returns null", async () => {
    await start([{ match: { path: "github/push" }, transform: { module: "github-push.ts" } }]);
    const payload = { ...readPayload("github/push.json"), ref: "refs/heads/dependabot/npm/x" };
    const response = await fetch(`${host.url}/hooks/github/push`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    expect(response.status).toBe(204);
    expect(host.eventsOf("session:agent-turn")).toHaveLength(0);
  });

  it("keeps the templated action when the transform returns undefined", async () => {
    await start([
      {
        match: { path: "s" },
        messageTemplate: "templated {{ v }}",
        transform: { module: "skip-or-keep.ts" },
      },
    ]);
    expect((await hook("s", { v: 1 })).status).toBe(202);
    expect(host.eventsOf("session:agent-turn")[0]!.raw).toBe("templated 1");
    expect((await hook("s", { skip: true })).status).toBe(204);
  });

  it("uses two named exports of one module from two mappings", async () => {
    await start([
      {
        id: "wake-side",
        match: { path: "alert/wake" },
        transform: { module: "named-exports.ts", export: "toWake" },
      },
      {
        id: "agent-side",
        match: { path: "alert/agent" },
        transform: { module: "named-exports.ts", export: "toAgent" },
      },
    ]);
    expect((await hook("alert/wake", { alert: "cpu" })).body).toMatchObject({
      mode: "now",
      mappingId: "wake-side",
    });
    expect((await hook("alert/agent", { alert: "disk" })).body).toMatchObject({ mappingId: "agent-side" });
    expect(host.eventsOf("session:system-event")[0]!.raw).toBe("alert: cpu");
    expect(host.eventsOf("session:agent-turn")[0]).toMatchObject({
      raw: "investigate disk from alert/agent",
      deliver: false,
    });
  });

  it.each([
    ["esm-module.mjs", "esm saw 7"],
    ["commonjs-module.cjs", "cjs saw 7"],
  ])("loads %s", async (module, raw) => {
    await start([{ match: { path: "m" }, transform: { module } }]);
    expect((await hook("m", { value: 7 })).status).toBe(202);
    expect(host.eventsOf("session:agent-turn")[0]!.raw).toBe(raw);
  });

  it("passes payload, headers, query, path, url, mapping id and now", async () => {
    await start([{ id: "echo", match: { path: "ctx/echo" }, transform: { module: "context-echo.ts" } }]);
    await post(`${host.url}/hooks/ctx/echo?page=3&page=4`, { a: [1] }, { ...AUTH, "x-demo": "yes" });
    const seen = JSON.parse(host.eventsOf("session:agent-turn")[0]!.raw);
    expect(seen).toEqual({
      path: "ctx/echo",
      url: "/hooks/ctx/echo?page=3&page=4",
      mapping: { id: "echo" },
      query: { page: "4" },
      header: "yes",
      credentialHeaders: [],
      now: "string",
      payload: { a: [1] },
    });
  });

  it("never hands a transform the token: no credential headers, no token in query or url", async () => {
    await start([{ id: "echo", match: { path: "ctx/echo" }, transform: { module: "context-echo.ts" } }]);
    const response = await post(
      `${host.url}/hooks/ctx/echo?token=${TOKEN}&page=1`,
      {},
      { "x-service-token": TOKEN, cookie: "s=1" },
    );
    expect(response.status).toBe(202);
    const raw = host.eventsOf("session:agent-turn")[0]!.raw;
    expect(raw).not.toContain(TOKEN);
    expect(JSON.parse(raw)).toMatchObject({
      url: "/hooks/ctx/echo?page=1",
      query: { page: "1" },
      credentialHeaders: [],
    });
  });

  it("applies the session-key policy to keys a transform chooses", async () => {
    await start([
      { match: { path: "k" }, messageTemplate: "m", transform: { module: "session-key-from-payload.ts" } },
    ]);
    expect((await hook("k", { key: "hook:from-transform" })).body.sessionKey).toBe("hook:from-transform");
    expect((await hook("k", { key: "main" })).body.code).toBe("SESSION_KEY_NOT_ALLOWED");
    expect((await hook("k", { key: "other:x" })).body.code).toBe("SESSION_KEY_NOT_ALLOWED");
  });

  it.each([
    ["broken/error-parse.ts", /error-parse|Unexpected|expected/i],
    ["broken/error-runtime.ts", /transform exploded/],
    ["broken/wrong-export.ts", /no function export/],
    ["broken/invalid-action.ts", /invalid action/],
    ["broken/never-resolves.ts", /did not finish within 300 ms/],
  ])("%s → 500 MAPPING_FAILED, reason in the log only", async (module, reason) => {
    await start([
      { id: "broken", match: { path: "b" }, transform: { module } },
      { id: "fine", match: { path: "ok" }, transform: { module: "esm-module.mjs" } },
    ]);
    const response = await hook("b", { value: 1 });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      ok: false,
      code: "MAPPING_FAILED",
      error: 'The mapping "broken" failed; the gateway log has the reason.',
    });
    expect(
      host.logs.some(
        (l) => l.level === "error" && reason.test(l.message) && l.fields?.mappingId === "broken",
      ),
    ).toBe(true);
    // One broken module never affects another mapping.
    expect((await hook("ok", { value: 2 })).status).toBe(202);
  });

  it("refuses modules outside transformsDir at startup: .., absolute, URL, symlink", () => {
    const issues = prepareHooks(
      {
        hooks: {
          enabled: true,
          token: TOKEN,
          transformsDir: "fixtures/transforms",
          mappings: [
            { transform: { module: "../outside-transforms/evil.ts" } },
            { transform: { module: path.join(TRANSFORMS_DIR, "esm-module.mjs") } },
            { transform: { module: "file:///etc/passwd.js" } },
            { transform: { module: "C:/x.ts" } },
            { transform: { module: "broken/escape-link.ts" } },
            { transform: { module: "notes.txt" } },
          ],
        },
      },
      { configDir: REPO_ROOT },
    ).issues;
    expect(issues.map((i) => i.path)).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => `hooks.mappings[${i}].transform.module`),
    );
    expect(issues[4]!.message).toMatch(/symlink/);
  });

  it("refuses a symlink that starts pointing outside after startup", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hooks-transforms-"));
    const outside = mkdtempSync(path.join(tmpdir(), "hooks-outside-"));
    temps.push(dir, outside);
    writeFileSync(path.join(outside, "evil.ts"), "export default () => ({ message: 'escaped' });\n");
    host = await startTestHost(createHooksPlugin(), {
      hooks: {
        enabled: true,
        token: TOKEN,
        transformsDir: dir,
        mappings: [{ match: { path: "l" }, transform: { module: "late-link.ts" } }],
      },
    });
    symlinkSync(path.join(outside, "evil.ts"), path.join(dir, "late-link.ts"));
    const response = await hook("l", {});
    expect(response.status).toBe(500);
    expect(host.logs.some((l) => /outside transformsDir/.test(l.message))).toBe(true);
  });

  it("reloads a module when its file changes, without a restart", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hooks-reload-"));
    temps.push(dir);
    const file = path.join(dir, "live.ts");
    writeFileSync(file, "export default () => ({ message: 'version one' });\n");
    // Checked on every request here; by default a change is seen within DEFAULT_RELOAD_CHECK_MS.
    host = await startTestHost(createHooksPlugin({ transformReloadCheckMs: 0 }), {
      hooks: {
        enabled: true,
        token: TOKEN,
        transformsDir: dir,
        mappings: [{ match: { path: "live" }, transform: { module: "live.ts" } }],
      },
    });
    await hook("live", {});
    writeFileSync(
      file,
      "const text: string = 'version two, a bit longer';\nexport default () => ({ message: text });\n",
    );
    await hook("live", {});
    expect(host.eventsOf("session:agent-turn").map((t) => t.raw)).toEqual([
      "version one",
      "version two, a bit longer",
    ]);
  });

  it("reports every failing module with its mapping id and path (what hooks check prints)", async () => {
    const prepared = prepareFixtureMappings([
      { id: "good", transform: { module: "github-push.ts" } },
      { id: "parse", transform: { module: "broken/error-parse.ts" } },
      { id: "export", transform: { module: "broken/wrong-export.ts" } },
      { id: "missing", transform: { module: "not-there.ts" } },
    ]);
    // Worker transforms (the default) load in a worker, as at start-up and in `hooks check`.
    const runner = createTransformRunner({
      transformsDir: prepared.config.transformsDir,
      timeoutMs: 5_000,
      reloadCheckMs: 0,
      maxMemoryMb: 128,
      metrics: NO_METRICS,
    });
    const reports = await loadAllTransforms(runner, prepared.mappings).finally(() => runner.close());
    expect(reports.map((r) => [r.mappingId, r.module, r.error === undefined])).toEqual([
      ["good", "github-push.ts", true],
      ["parse", "broken/error-parse.ts", false],
      ["export", "broken/wrong-export.ts", false],
      ["missing", "not-there.ts", false],
    ]);
  });
});

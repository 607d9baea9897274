/** @module The inspector inside OpenClaw, on a stand-in of its API: route, Control UI tab, tools per load mode and per OpenClaw release, and what the tools read. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import openclawPlugin from "../../src/openclaw/index.js";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import { INSPECTOR_TOOL_NAMES } from "../../src/openclaw/inspector-tool-params.js";
import type { OpenClawTool } from "../../src/openclaw/openclaw-api.js";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { REPO_ROOT } from "../helpers/repo.js";

const TOKEN = "oc-inspector-token-0123456789abcdef";
const enabled = {
  enabled: true,
  token: TOKEN,
  path: "/intake",
  mappings: [
    { id: "deploy", match: { path: "deploy" }, action: "wake", textTemplate: "Deployed {{payload.service}}" },
  ],
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serve(fake: FakeOpenClaw) {
  openclawPlugin.register(fake.api);
  const server = await fake.listen();
  cleanups.push(async () => {
    await server.close();
    for (const service of fake.services) await service.stop?.({});
  });
  return server;
}

function tool(fake: FakeOpenClaw, name: string): OpenClawTool {
  const found = fake.tools.find((each) => each.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

describe("the inspector inside OpenClaw (stand-in API)", () => {
  it("full load: a Control UI tab that frames the gateway-auth route, and the three tools the manifest declares", () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled });
    openclawPlugin.register(fake.api);
    expect(fake.routes.find((route) => route.path === INSPECTOR_PATH)).toMatchObject({
      auth: "gateway",
      match: "prefix",
    });
    expect(fake.descriptors).toEqual([
      expect.objectContaining({ id: "inspector", surface: "tab", path: INSPECTOR_PATH, label: "Webhooks" }),
    ]);
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, "openclaw.plugin.json"), "utf8")) as {
      contracts?: { tools?: string[] };
    };
    expect(fake.tools.map((each) => each.name)).toEqual(manifest.contracts?.tools);
  });

  it.each(["discovery", "tool-discovery", "cli-metadata"])(
    "%s load: the route and the tab are listed, no tools are given",
    (registrationMode) => {
      const fake = fakeOpenClaw({ pluginConfig: enabled, registrationMode });
      openclawPlugin.register(fake.api);
      expect(fake.routes.map((route) => route.path)).toContain(INSPECTOR_PATH);
      expect(fake.descriptors.map((descriptor) => descriptor.id)).toEqual(["inspector"]);
      expect(fake.tools).toEqual([]);
    },
  );

  it("an OpenClaw without plugin tools or tabs: the page's route still, and a debug line for each left out", () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled, withoutToolsAndTabs: true });
    openclawPlugin.register(fake.api);
    expect(fake.routes.map((route) => route.path)).toContain(INSPECTOR_PATH);
    expect(fake.logs).toContainEqual(expect.stringMatching(/^debug .*no plugin tabs/));
    expect(fake.logs).toContainEqual(expect.stringMatching(/^debug .*no plugin tools/));
  });

  it.each(["/plugins", "/plugins/hooks-intake", `${INSPECTOR_PATH}/x`])(
    "an intake path over or under the inspector's (%s) is a config error naming the key",
    (intakePath) => {
      const fake = fakeOpenClaw({ pluginConfig: { ...enabled, path: intakePath } });
      expect(() => openclawPlugin.register(fake.api)).toThrow(
        /plugins\.entries\.hooks-intake\.config\.path: .*overlaps the inspector's page/,
      );
      expect(fake.routes).toEqual([]);
    },
  );

  it("the page answers 503 until the service runs, then serves it (OpenClaw has checked the caller)", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled });
    const server = await serve(fake);
    expect((await fetch(`${server.url}${INSPECTOR_PATH}`)).status).toBe(503);
    for (const service of fake.services) await service.start({});
    const page = await fetch(`${server.url}${INSPECTOR_PATH}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).not.toContain(TOKEN);
  });

  it("the tools read what the plugin recorded: a request sent with the token, its credential redacted", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled });
    const server = await serve(fake);
    const recent = tool(fake, INSPECTOR_TOOL_NAMES.recent);
    for (const service of fake.services) await service.start({});

    const service = `api-${Date.now()}`;
    const sent = await fetch(`${server.url}/intake/deploy?source=ci`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ service }),
    });
    expect(sent.status).toBe(200);
    const requestId = sent.headers.get("x-request-id")!;

    const listed = await recent.execute("call", { hook: "deploy", text: requestId });
    const [summary] = (listed.details as { requests: { id: string; requestId: string }[] }).requests;
    expect(summary).toMatchObject({ requestId, hook: "deploy", mappingId: "deploy", status: 200 });

    const detail = await tool(fake, INSPECTOR_TOOL_NAMES.detail).execute("call", { id: summary!.id });
    expect(detail.details).toMatchObject({ requestId, body: { value: { service } } });
    // The credential header is shown redacted, or not kept at all.
    const { headers } = detail.details as { headers?: Record<string, string> };
    expect(headers?.["content-type"]).toBe("application/json");
    expect(headers?.["authorization"] ?? "[redacted]").toBe("[redacted]");
    const dryRun = await tool(fake, INSPECTOR_TOOL_NAMES.dryRun).execute("call", { id: summary!.id });
    expect(dryRun.details).toMatchObject({ status: 200, mappingId: "deploy" });
    // Nothing was emitted by the dry run: the one wake in OpenClaw's queue is the request's own.
    expect(fake.queue.drain("agent:main:main").filter((text) => text.includes(service))).toHaveLength(1);
    for (const answer of [listed, detail, dryRun]) {
      expect(JSON.stringify(answer)).not.toContain(TOKEN);
    }
  });

  it("a refused request is listed with its status and code, for 'it got a 401 and I cannot see why'", async () => {
    const fake = fakeOpenClaw({ pluginConfig: enabled });
    const server = await serve(fake);
    for (const service of fake.services) await service.start({});
    const wrong = "wrong-token-abcdefghijklmnopqrstuvwxyz";
    const refused = await fetch(`${server.url}/intake/deploy`, {
      method: "POST",
      headers: { authorization: `Bearer ${wrong}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(refused.status).toBe(401);
    const listed = await tool(fake, INSPECTOR_TOOL_NAMES.recent).execute("call", { status: "401" });
    expect((listed.details as { requests: unknown[] }).requests).toEqual([
      expect.objectContaining({
        requestId: refused.headers.get("x-request-id"),
        hook: "deploy",
        status: 401,
        state: "refused",
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(wrong);
  });
});

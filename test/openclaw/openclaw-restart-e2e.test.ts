/** @module The plugin inside the real OpenClaw across its restart: unread wakes handed over again once, agent turns admitted before 202 (409 for an archived session), metrics behind the gateway token. */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOpenClawRuntime } from "../../scripts/openclaw-runtime.mjs";
import { METRICS_PATH } from "../../src/openclaw/metrics-route.js";
import {
  OPENCLAW_CLI_TIMEOUT_MS,
  OPENCLAW_READY_TIMEOUT_MS,
  OPENCLAW_SETUP_TIMEOUT_MS,
  type OpenClawGateway,
  openClawSkipReason,
  postJson,
  promptOrLog,
  startOpenClawGateway,
  stubModelProviderConfig,
} from "../helpers/openclaw-gateway.js";
import { pluginTarball, removePluginTarball } from "../helpers/plugin-tarball.js";
import { type StubModel, startStubModel } from "../helpers/stub-model.js";

const PROMPT_TIMEOUT_MS = 60_000;

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const occurrences = (text: string, marker: string) => text.split(marker).length - 1;

describe.skipIf(openClawSkipReason !== undefined)(
  "the plugin inside OpenClaw 2026.9.6, across its restart",
  () => {
    const pluginToken = hex(24);
    const gatewayToken = hex(24);
    let stub: StubModel;
    let gateway: OpenClawGateway;

    const post = (path: string, body: unknown) => postJson(gateway, path, body, pluginToken);
    const prompt = (where: (text: string) => boolean) => promptOrLog(stub, gateway, where, PROMPT_TIMEOUT_MS);

    beforeAll(async () => {
      const runtime = await ensureOpenClawRuntime();
      stub = await startStubModel({
        reply: (text) => {
          const task = /AGENT-TASK-([0-9a-f]+)/.exec(text);
          return task ? `Done with task ${task[1]}.` : "NO_REPLY";
        },
      });
      const models = stubModelProviderConfig(stub.baseUrl);
      const agents = models["agents"] as { defaults: Record<string, unknown> };
      gateway = await startOpenClawGateway({
        runtime,
        // Installed as users install it: the packed tarball, through OpenClaw's own installer.
        installTarball: await pluginTarball(),
        config: {
          ...models,
          // No scheduled heartbeat within the test: a wake for the next heartbeat waits in OpenClaw's queue.
          agents: { defaults: { ...agents.defaults, heartbeat: { every: "24h" } } },
          gateway: { auth: { mode: "token", token: gatewayToken } },
          plugins: {
            entries: {
              "hooks-intake": {
                enabled: true,
                config: {
                  enabled: true,
                  token: pluginToken,
                  path: "/intake",
                  allowRequestSessionKey: true,
                  allowedSessionKeyPrefixes: ["hook:"],
                },
              },
            },
          },
        },
      });
    }, OPENCLAW_SETUP_TIMEOUT_MS);

    afterAll(async () => {
      await gateway?.stop();
      await stub?.close();
      await removePluginTarball();
    }, 30_000);

    it("the metrics answer 401 without OpenClaw's gateway token and Prometheus text with it", async () => {
      const refused = await fetch(`${gateway.url}${METRICS_PATH}`);
      expect(refused.status, gateway.logText().slice(-8_000)).toBe(401);
      const wrong = await fetch(`${gateway.url}${METRICS_PATH}`, {
        headers: { authorization: `Bearer ${pluginToken}` },
      });
      expect(wrong.status).toBe(401);
      const scraped = await fetch(`${gateway.url}${METRICS_PATH}`, {
        headers: { authorization: `Bearer ${gatewayToken}` },
      });
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await scraped.text()).toMatch(/^# TYPE hooks_requests_total counter$/m);
    });

    it(
      "an agent turn is answered 202 once OpenClaw admitted it, and runs (started outside the route's scope); an archived session is 409",
      async () => {
        const task = hex(6);
        const sessionKey = `hook:admission-${task}`;
        // Persistent: the turn runs in the key's own session, which can then be archived by that key.
        const response = await post("/intake/agent", {
          message: `AGENT-TASK-${task}`,
          sessionKey,
          sessionMode: "persistent",
        });
        expect(response.status).toBe(202);
        await prompt((text) => text.includes(`AGENT-TASK-${task}`));
        expect(gateway.logText()).not.toMatch(/missing scope/i);

        const archived = await gateway.cli(
          ["sessions", "archive", `agent:main:${sessionKey}`, "--json", "--timeout", "45000"],
          OPENCLAW_CLI_TIMEOUT_MS,
        );
        expect(archived.code, `${archived.stdout}\n${archived.stderr}`).toBe(0);
        const conflict = await post("/intake/agent", {
          message: `AGENT-TASK-${hex(6)}`,
          sessionKey,
          sessionMode: "persistent",
        });
        const body = (await conflict.json()) as { code: string; error: string };
        expect([conflict.status, body.code], body.error).toEqual([409, "SESSION_CONFLICT"]);
        expect(body.error).toMatch(/archived/);
        // Admission started the run and the adapter's start asked again with the same idempotency key: OpenClaw ran it
        // once (the CLI call above gave a second run ample time to reach the model).
        expect(stub.prompts.filter((text) => text.includes(`AGENT-TASK-${task}`))).toHaveLength(1);
      },
      PROMPT_TIMEOUT_MS + OPENCLAW_CLI_TIMEOUT_MS + 10_000,
    );

    it(
      "10 wakes queued for the next heartbeat survive OpenClaw's restart and reach the model once each",
      async () => {
        const batch = hex(4);
        const markers = Array.from({ length: 10 }, (_, i) => `UNREAD-${batch}-${i + 1}.`);
        for (const marker of markers) {
          expect((await post("/intake/wake", { text: marker, mode: "next-heartbeat" })).status).toBe(200);
        }
        const before = stub.prompts.length;
        await gateway.restart();
        // A heartbeat now: a wake with mode now asks for one at once.
        const trigger = `TRIGGER-${batch}.`;
        expect((await post("/intake/wake", { text: trigger, mode: "now" })).status).toBe(200);
        const seen = await prompt((text) => text.includes(trigger));
        for (const marker of markers) expect(occurrences(seen, marker), marker).toBe(1);
        expect(gateway.logText()).toContain("handed over again the wakes OpenClaw had not read");
        // Nothing was seen before the restart, and no prompt since holds a marker twice.
        expect(
          stub.prompts.slice(0, before).some((text) => markers.some((marker) => text.includes(marker))),
        ).toBe(false);
        for (const text of stub.prompts) {
          for (const marker of markers) expect(occurrences(text, marker)).toBeLessThanOrEqual(1);
        }
      },
      OPENCLAW_READY_TIMEOUT_MS + PROMPT_TIMEOUT_MS + 30_000,
    );
  },
);

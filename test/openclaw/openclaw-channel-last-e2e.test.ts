/** @module `channel: "last"` inside the real OpenClaw: its Telegram channel against a loopback Bot API records a DM's chat as the main session's route, and the plugin's reply goes to that chat. */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOpenClawRuntime, type OpenClawRuntime } from "../../scripts/openclaw-runtime.mjs";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import {
  OPENCLAW_CLI_TIMEOUT_MS,
  OPENCLAW_SETUP_TIMEOUT_MS,
  type OpenClawGateway,
  openClawSkipReason,
  startOpenClawGateway,
  stubModelProviderConfig,
} from "../helpers/openclaw-gateway.js";
import { pluginTarball, removePluginTarball } from "../helpers/plugin-tarball.js";
import { type StubModel, startStubModel } from "../helpers/stub-model.js";
import { type StubTelegram, startStubTelegram } from "../helpers/stub-telegram.js";

/** The DM is polled within a second; the turn and the reply took 5–9 s on 2 cores. */
const TURN_TIMEOUT_MS = 45_000;
const CHAT_ID = 4242;
const MAIN_SESSION = "agent:main:main";
/** How OpenClaw names a Telegram chat as a delivery target. */
const TARGET = `telegram:${CHAT_ID}`;

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

interface ListedSession {
  key: string;
  [field: string]: unknown;
}

/**
 * The session's entry as OpenClaw stored it, which is what a plugin's `runtime.agent.session.getSessionEntry`
 * reads (minus private fields). The store is SQLite: read with the runtime's Node 26, since `node:sqlite` is not
 * in the Node that runs the tests.
 */
async function storedSessionEntry(runtime: OpenClawRuntime, dbPath: string, key: string): Promise<unknown> {
  const script = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1], { readOnly: true });
    const row = db.prepare("select entry_json from session_nodes where session_key = ?").get(process.argv[2]);
    process.stdout.write(row ? row.entry_json : "null");`;
  const { stdout } = await promisify(execFile)(runtime.nodeBin, ["-e", script, dbPath, key], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

describe.skipIf(openClawSkipReason !== undefined)(
  'channel "last" inside OpenClaw, with its Telegram channel on a stub Bot API',
  () => {
    const gatewayToken = hex(24);
    const pluginToken = hex(24);
    const marker = hex(6);
    let runtime: OpenClawRuntime;
    let model: StubModel;
    let telegram: StubTelegram;
    let gateway: OpenClawGateway;

    /** Adds what the stub saw and the gateway's log (secrets redacted) to a failure: that is where the why is. */
    const explained = async <T>(wait: Promise<T>): Promise<T> => {
      try {
        return await wait;
      } catch (error) {
        const calls = JSON.stringify(Object.fromEntries(telegram.calls));
        throw new Error(
          `${(error as Error).message}\n--- Bot API calls ${calls}, not implemented: ${JSON.stringify(
            telegram.unknown,
          )}\n--- gateway log\n${gateway.logText().slice(-8_000)}`,
        );
      }
    };

    beforeAll(async () => {
      runtime = await ensureOpenClawRuntime();
      model = await startStubModel({
        reply: (prompt) =>
          prompt.includes(`DM-${marker}`)
            ? `Got it: REPLY-${marker}.`
            : prompt.includes(`EARLY-${marker}`)
              ? `Nothing to deliver yet: UNDELIVERED-${marker}.`
              : prompt.includes(`HOOK-${marker}`)
                ? `Build passed: DELIVERED-${marker}.`
                : "NO_REPLY",
      });
      telegram = await startStubTelegram();
      gateway = await startOpenClawGateway({
        runtime,
        installTarball: await pluginTarball(),
        config: {
          plugins: {
            entries: {
              "hooks-intake": {
                enabled: true,
                config: { enabled: true, token: pluginToken, path: "/intake" },
              },
            },
          },
          ...stubModelProviderConfig(model.baseUrl),
          gateway: { auth: { mode: "token", token: gatewayToken } },
          // A loopback apiRoot needs no network opt-in: OpenClaw's private-network guard covers media downloads.
          // session.dmScope is left at its default, so a DM lands in the main session.
          channels: {
            telegram: {
              enabled: true,
              botToken: telegram.token,
              apiRoot: telegram.apiRoot,
              dmPolicy: "open",
              allowFrom: ["*"],
            },
          },
        },
      });
    }, OPENCLAW_SETUP_TIMEOUT_MS);

    afterAll(async () => {
      await gateway?.stop();
      await telegram?.close();
      await model?.close();
      await removePluginTarball();
    }, 30_000);

    const agent = (body: Record<string, unknown>) =>
      fetch(`${gateway.url}/intake/agent`, {
        method: "POST",
        headers: { authorization: `Bearer ${pluginToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    /** What the plugin's inspector (behind OpenClaw's gateway auth) knows of the request: its run's delivery result. */
    const deliveryOf = async (requestId: string): Promise<string | undefined> => {
      const get = (path: string) =>
        fetch(`${gateway.url}${INSPECTOR_PATH}/api/requests${path}`, {
          headers: { authorization: `Bearer ${gatewayToken}` },
        }).then((response) => response.json());
      const { requests } = (await get("?hook=agent")) as { requests: { id: string; requestId: string }[] };
      const row = requests.find((each) => each.requestId === requestId);
      if (row === undefined) return undefined;
      const detail = (await get(`/${encodeURIComponent(row.id)}`)) as { runs?: { delivery?: string }[] };
      return detail.runs?.[0]?.delivery;
    };

    it(
      'before the user has talked on any channel, a reply to "last" fails to deliver, and says why',
      async () => {
        const response = await agent({
          message: `EARLY-${marker}: a first hook`,
          name: "Early",
          deliver: true,
          channel: "last",
          waitForCompletion: true,
        });
        expect(response.status).toBe(200);
        // A visible reply, so there is something to deliver.
        const body = await response.json();
        expect(body, gateway.logText().slice(-6_000)).toMatchObject({
          ok: true,
          status: "ok",
          reply: "visible",
        });
        const requestId = response.headers.get("x-request-id")!;
        await expect
          .poll(() => deliveryOf(requestId), { timeout: TURN_TIMEOUT_MS, interval: 500 })
          .toMatch(/^failed: no last route/);
        expect(telegram.sent).toEqual([]);
      },
      TURN_TIMEOUT_MS * 2,
    );

    it(
      "a DM from chat 4242 reaches the model, and the reply is sent to chat 4242",
      async () => {
        telegram.sendUserMessage(CHAT_ID, `Hello from Telegram DM-${marker}`);
        await explained(model.waitForPrompt((prompt) => prompt.includes(`DM-${marker}`), TURN_TIMEOUT_MS));
        const reply = await explained(
          telegram.waitForSent((send) => (send.text ?? "").includes(`REPLY-${marker}`), TURN_TIMEOUT_MS),
        );
        expect(reply).toMatchObject({ method: "sendMessage", chatId: String(CHAT_ID) });
      },
      TURN_TIMEOUT_MS * 2,
    );

    it(
      "the main session records the DM's chat as its route: telegram, telegram:4242",
      async () => {
        // Runs after the DM's turn (the test above): OpenClaw records the route when a turn starts.
        expect(telegram.sent.some((send) => (send.text ?? "").includes(`REPLY-${marker}`))).toBe(true);
        const call = await gateway.cli(
          ["gateway", "call", "sessions.list", "--json", "--port", String(gateway.port)],
          OPENCLAW_CLI_TIMEOUT_MS,
        );
        expect(call.code, call.stderr).toBe(0);
        const listed = JSON.parse(call.stdout) as { path: string; sessions: ListedSession[] };
        // With the default dmScope the DM went to the main session (the hooks' turns ran in sessions of their own).
        const main = listed.sessions.find((session) => session.key === MAIN_SESSION);
        expect(listed.sessions.filter((session) => !session.key.startsWith("agent:main:hook:"))).toEqual([
          main,
        ]);
        const route = { channel: "telegram", to: TARGET, accountId: "default" };
        // What the gateway's sessions.list shows: the stored route and its flat compatibility fields.
        expect(main).toMatchObject({
          deliveryContext: route,
          lastChannel: "telegram",
          lastTo: TARGET,
          lastAccountId: "default",
          chatType: "direct",
        });
        // What is stored, and what a plugin reading the session entry gets: only the nested `delivery` record.
        const stored = await storedSessionEntry(runtime, listed.path, MAIN_SESSION);
        expect(stored).toMatchObject({
          chatType: "direct",
          delivery: {
            kind: "external",
            context: route,
            route: { channel: "telegram", accountId: "default", target: { to: TARGET } },
            origin: { provider: "telegram", chatType: "direct", from: TARGET, to: TARGET },
          },
        });
        expect(stored).not.toHaveProperty("lastChannel");
        expect(stored).not.toHaveProperty("deliveryContext");
      },
      OPENCLAW_CLI_TIMEOUT_MS,
    );

    it(
      'a hook\'s reply with channel "last" goes to the chat the user last talked on: chat 4242',
      async () => {
        // Runs after the DM (above): the main session's stored route is telegram:4242 now.
        const response = await agent({
          message: `HOOK-${marker}: summarize the build`,
          name: "CI",
          deliver: true,
          channel: "last",
          waitForCompletion: true,
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ ok: true, status: "ok", delivered: true });
        const requestId = response.headers.get("x-request-id")!;
        const sent = await explained(
          telegram.waitForSent((send) => (send.text ?? "").includes(`DELIVERED-${marker}`), TURN_TIMEOUT_MS),
        );
        expect(sent).toMatchObject({ method: "sendMessage", chatId: String(CHAT_ID) });
        await expect
          .poll(() => deliveryOf(requestId), { timeout: TURN_TIMEOUT_MS, interval: 500 })
          .toBe("sent");
      },
      TURN_TIMEOUT_MS * 2,
    );

    it("OpenClaw never logs the bot token (also the Bot API's URL path) or the hook token", () => {
      expect(telegram.calls.get("sendMessage")).toBeGreaterThan(0);
      expect(gateway.containsInLogs(telegram.token)).toBe(false);
      expect(gateway.containsInLogs(pluginToken)).toBe(false);
    });
  },
);

/** @module The plugin inside the real OpenClaw gateway: wake, no loss past OpenClaw's 20-event queue, agent turn and summary, a mapped hook, Meta's handshake, a turn cap, a source allow-list, 401, hot reload of its config. */
import { createHmac, randomBytes } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOpenClawRuntime } from "../../scripts/openclaw-runtime.mjs";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import { INSPECTOR_TOOL_NAMES } from "../../src/openclaw/inspector-tool-params.js";
import {
  OPENCLAW_CLI_TIMEOUT_MS,
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

// A heartbeat reaches the model in seconds; an agent turn, its summary and the heartbeat after it in under half a minute.
const PROMPT_TIMEOUT_MS = 60_000;
// A config edit re-registers the plugin in 4–8 s; a refused one is rolled back after 10–13 s (2 cores).
const RELOAD_TIMEOUT_MS = 30_000;
const RETRY_INTERVAL_MS = 250;
/** The plugin's refusal of a path on OpenClaw's own hooks, naming both keys (quotes are escaped in the JSON log file). */
const OVERLAP_ERROR =
  /plugins\.entries\.hooks-intake\.config\.path: \\?"\/hooks\\?" overlaps OpenClaw's built-in hooks at hooks\.path \\?"\/hooks\\?"/;

interface PluginConfig {
  path: string;
  mappings: Record<string, unknown>[];
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** A JSON POST from a given loopback source address (Linux routes all of 127.0.0.0/8 to lo). */
function postFrom(
  base: string,
  path: string,
  body: unknown,
  token: string,
  localAddress: string,
): Promise<{ status: number; body: unknown }> {
  const target = new URL(base);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: "POST",
        path,
        localAddress,
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(text)),
        },
      },
      (response) => {
        let received = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          received += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(received) }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(text);
  });
}

describe.skipIf(openClawSkipReason !== undefined)("the plugin inside OpenClaw 2026.9.6", () => {
  const pluginToken = hex(24);
  const builtInToken = hex(24);
  const gatewayToken = hex(24);
  const wrongToken = hex(24);
  const metaAppSecret = hex(16);
  const metaVerifyToken = hex(12);
  let stub: StubModel;
  let gateway: OpenClawGateway;

  const post = (path: string, body: unknown, token = pluginToken) => postJson(gateway, path, body, token);
  const prompt = (where: (text: string) => boolean) => promptOrLog(stub, gateway, where, PROMPT_TIMEOUT_MS);

  beforeAll(async () => {
    const runtime = await ensureOpenClawRuntime();
    // An agent turn gets a reply naming its task, so its summary can be found in a later main-session prompt.
    stub = await startStubModel({
      reply: (text) => {
        const task = /AGENT-TASK-([0-9a-f]+)/.exec(text);
        return task ? `Done with task ${task[1]}: REPLY-${task[1]}.` : "NO_REPLY";
      },
    });
    gateway = await startOpenClawGateway({
      runtime,
      // Installed as users install it: the packed tarball, through OpenClaw's own installer.
      installTarball: await pluginTarball(),
      config: {
        ...stubModelProviderConfig(stub.baseUrl),
        gateway: { auth: { mode: "token", token: gatewayToken } },
        // OpenClaw's own webhooks stay on /hooks; the plugin serves beside them on a path of its own.
        hooks: { enabled: true, token: builtInToken, path: "/hooks" },
        plugins: {
          entries: {
            "hooks-intake": {
              enabled: true,
              config: {
                enabled: true,
                token: pluginToken,
                path: "/intake",
                // A request may name an agent; only OpenClaw's main agent is allowed.
                allowRequestAgentId: true,
                allowedAgentIds: ["main"],
                mappings: [
                  {
                    id: "monitor",
                    match: { path: "monitor" },
                    action: "wake",
                    wakeMode: "now",
                    textTemplate: "Monitor {{payload.check}} is {{payload.state}}",
                    instructions: "OPERATOR-NOTE: tell the user which check changed.",
                  },
                  {
                    // A Meta sender: its subscription GET and its signed POSTs on one path.
                    id: "whatsapp",
                    match: { path: "whatsapp" },
                    action: "wake",
                    wakeMode: "now",
                    textTemplate: "WhatsApp says {{payload.text}}",
                    verify: { scheme: "meta", secret: metaAppSecret, verifyToken: metaVerifyToken },
                  },
                  {
                    // Only one source address may post here: 127.0.0.2 stands for the sender, 127.0.0.3 for anyone else.
                    id: "allowed-source",
                    match: { path: "allowed-source" },
                    action: "wake",
                    wakeMode: "next-heartbeat",
                    textTemplate: "ALLOWED-SOURCE {{payload.n}}",
                    allowFrom: ["127.0.0.2/32"],
                  },
                  {
                    // One turn at a time: the next waits in the plugin, admitted by OpenClaw only when it starts.
                    id: "serial",
                    match: { path: "serial" },
                    action: "agent",
                    name: "Serial",
                    wakeMode: "now",
                    messageTemplate: "AGENT-TASK-{{payload.task}}",
                    maxConcurrentTurns: 1,
                  },
                ],
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

  it(
    "a wake's text reaches the model in the main session",
    async () => {
      const marker = `WAKE-${hex(6)}`;
      const response = await post("/intake/wake", { text: marker, mode: "now" });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ok: true, mode: "now", eventOutcome: "queued" });
      // The plugin's safety wrapper survives inside OpenClaw's own internal-context block.
      expect(await prompt((text) => text.includes(marker))).toMatch(
        new RegExp(
          `EXTERNAL_UNTRUSTED_CONTENT[^>]*>>>[\\s\\S]*${marker}[\\s\\S]*END_EXTERNAL_UNTRUSTED_CONTENT`,
        ),
      );
    },
    PROMPT_TIMEOUT_MS + 10_000,
  );

  it(
    "30 wakes for the next heartbeat and one for now: all 31 reach the model",
    async () => {
      const batch = hex(4);
      const markers = Array.from({ length: 31 }, (_, i) => `NOLOSS-${batch}-${i + 1}.`);
      const outcomes: string[] = [];
      for (const marker of markers.slice(0, 30)) {
        const response = await post("/intake/wake", { text: marker, mode: "next-heartbeat" });
        expect(response.status).toBe(200);
        outcomes.push(((await response.json()) as { eventOutcome: string }).eventOutcome);
      }
      // The first starts a batch in OpenClaw's queue, the others join it while no heartbeat has read it.
      expect(outcomes[0]).toBe("queued");
      expect(outcomes.slice(1)).toContain("coalesced");
      expect(outcomes.every((outcome) => outcome === "queued" || outcome === "coalesced")).toBe(true);
      expect((await post("/intake/wake", { text: markers[30], mode: "now" })).status).toBe(200);
      await prompt((text) => text.includes(markers[30]!));
      const seen = stub.prompts.join("\n");
      expect(markers.filter((marker) => !seen.includes(marker))).toEqual([]);
    },
    PROMPT_TIMEOUT_MS + 20_000,
  );

  it(
    "an agent turn runs in OpenClaw and its summary reaches a later main-session prompt",
    async () => {
      const task = hex(6);
      const response = await post("/intake/agent", {
        message: `AGENT-TASK-${task}`,
        name: "Builder",
        wakeMode: "now",
      });
      expect(response.status).toBe(202);
      expect(await response.json()).toMatchObject({ ok: true, sessionKey: expect.stringMatching(/^hook:/) });
      await prompt((text) => text.includes(`AGENT-TASK-${task}`));
      const summary = await prompt((text) => text.includes(`REPLY-${task}`) && text.includes("Builder:"));
      expect(summary).toMatch(new RegExp(`Builder: [\\s\\S]*Done with task ${task}: REPLY-${task}\\.`));
    },
    2 * PROMPT_TIMEOUT_MS,
  );

  it(
    "waitForCompletion holds the answer until OpenClaw's run has finished, and tells how it ended",
    async () => {
      const task = hex(6);
      const response = await post("/intake/agent", {
        message: `AGENT-TASK-${task}`,
        name: "Waiter",
        deliver: false,
        waitForCompletion: true,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        ok: true,
        sessionKey: expect.stringMatching(/^hook:/),
        status: "ok",
        reply: "visible",
        replyDisposition: "visible",
        delivered: false,
      });
      // The answer came after the model was asked: the stub saw the task before the caller got its outcome.
      expect(stub.prompts.some((text) => text.includes(`AGENT-TASK-${task}`))).toBe(true);
    },
    2 * PROMPT_TIMEOUT_MS,
  );

  it(
    "a mapped hook turns its payload into a wake",
    async () => {
      const check = `disk-${hex(4)}`;
      const response = await post("/intake/monitor", { check, state: "critical" });
      expect(response.status).toBe(200);
      // Queued, or coalesced into a batch an earlier test's summary opened and no heartbeat has read yet.
      expect(await response.json()).toMatchObject({
        ok: true,
        mappingId: "monitor",
        eventOutcome: expect.stringMatching(/^(queued|coalesced)$/),
      });
      const seen = await prompt((text) => text.includes(`Monitor ${check} is critical`));
      // The operator's instructions stand before the wrapped payload, outside it.
      expect(seen).toMatch(
        new RegExp(
          `OPERATOR-NOTE: tell the user which check changed\\.\\s*(?:(?!END_EXTERNAL_UNTRUSTED_CONTENT)[\\s\\S])*<<<EXTERNAL_UNTRUSTED_CONTENT[\\s\\S]*Monitor ${check} is critical`,
        ),
      );
    },
    PROMPT_TIMEOUT_MS + 10_000,
  );

  it(
    "Meta's subscription GET and a signed delivery pass through OpenClaw's route",
    async () => {
      const challenge = `${hex(5)}`;
      const subscribe = (token: string) =>
        fetch(
          `${gateway.url}/intake/whatsapp?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=${challenge}`,
        );
      const answered = await subscribe(metaVerifyToken);
      expect(answered.status).toBe(200);
      expect(answered.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await answered.text()).toBe(challenge);
      expect((await subscribe(hex(12))).status).toBe(403);
      // Signed the way Meta documents it: HMAC-SHA256 of the exact body, keyed with the app secret.
      const marker = `META-${hex(6)}`;
      const body = JSON.stringify({ text: marker });
      const signature = `sha256=${createHmac("sha256", metaAppSecret).update(body).digest("hex")}`;
      const delivered = await fetch(`${gateway.url}/intake/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signature },
        body,
      });
      expect(delivered.status).toBe(200);
      await prompt((text) => text.includes(`WhatsApp says ${marker}`));
    },
    PROMPT_TIMEOUT_MS + 10_000,
  );

  it(
    "a turn over its mapping's cap waits in the plugin, then runs once",
    async () => {
      const tasks = [hex(6), hex(6)];
      const answers: Array<Record<string, unknown>> = [];
      for (const task of tasks) {
        const response = await post("/intake/serial", { task });
        expect(response.status).toBe(202);
        answers.push((await response.json()) as Record<string, unknown>);
      }
      expect(answers[0]?.queued).toBeUndefined();
      expect(answers[1]).toMatchObject({ ok: true, queued: true });
      // Each turn's own run reaches the model (its summaries then wait for OpenClaw's 30 s heartbeat gap: not
      // waited for here). The waiting one was admitted once, when it left the queue.
      const asked = (task: string) =>
        stub.prompts.filter((text) => text.includes(`AGENT-TASK-${task}`) && !text.includes(`REPLY-${task}`));
      for (const task of tasks) await prompt((text) => text.includes(`AGENT-TASK-${task}`));
      for (const task of tasks) expect(asked(task)).toHaveLength(1);
    },
    2 * PROMPT_TIMEOUT_MS,
  );

  it("an agent named in the request runs when allowed; one outside hooks.allowedAgentIds is refused", async () => {
    const allowed = await post("/intake/agent", { message: "agent check", agentId: "main", deliver: false });
    expect(allowed.status).toBe(202);
    const refused = await post("/intake/agent", { message: "agent check", agentId: "ops", deliver: false });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ ok: false, code: "AGENT_ID_NOT_ALLOWED" });
  });

  it("allowFrom: a mapping that names one source address takes it and refuses another with 403 before the token", async () => {
    const from = (address: string, token: string) =>
      postFrom(gateway.url, "/intake/allowed-source", { n: address }, token, address);
    expect(await from("127.0.0.2", pluginToken)).toMatchObject({ status: 200, body: { ok: true } });
    // Refused before its credential is looked at: the right token and a wrong one get the same 403.
    for (const token of [pluginToken, wrongToken]) {
      expect(await from("127.0.0.3", token)).toMatchObject({
        status: 403,
        body: { ok: false, code: "SOURCE_NOT_ALLOWED" },
      });
    }
  });

  it("a wrong token gets the plugin's 401; OpenClaw's own hooks still answer beside it", async () => {
    const refused = await post("/intake/wake", { text: "never" }, wrongToken);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ ok: false, code: "UNAUTHORIZED" });
    // The plugin's token is not OpenClaw's, and OpenClaw's is not the plugin's.
    expect((await post("/hooks/wake", { text: "built-in" }, pluginToken)).status).toBe(401);
    expect((await post("/intake/wake", { text: "plugin" }, builtInToken)).status).toBe(401);
    expect(
      (await post("/hooks/wake", { text: `built-in ${hex(4)}`, mode: "next-heartbeat" }, builtInToken))
        .status,
    ).toBe(200);
  });

  it("no token reaches a log or the model", () => {
    for (const secret of [
      pluginToken,
      builtInToken,
      gatewayToken,
      wrongToken,
      metaAppSecret,
      metaVerifyToken,
    ]) {
      expect(gateway.containsInLogs(secret)).toBe(false);
      expect(stub.prompts.some((text) => text.includes(secret))).toBe(false);
    }
    // The plugin did log: the check above looked at real output.
    expect(gateway.logText()).toContain("webhook intake serving /intake");
  });

  /*
   * The inspector inside OpenClaw: its page behind OpenClaw's gateway auth, its Control UI tab, the assistant's tools.
   * What OpenClaw 2026.9.6 does, from its package (docs/ and dist/) and these runs:
   * - `registerHttpRoute({ auth: "gateway" })`: OpenClaw checks the caller before the handler runs. A script or curl
   *   sends `Authorization: Bearer <gateway.auth.token>` (or the password; `x-openclaw-scopes` is ignored for these);
   *   no query-string form. A browser gets in only inside the Control UI tab: after its authenticated bootstrap,
   *   OpenClaw sets a short-lived HttpOnly cookie bound to this plugin and the route's root, good for GET and HEAD
   *   with `operator.read`. Without either: plain-text 401 "Unauthorized", and each wrong token is slowed down.
   * - `api.session.controls.registerControlUiDescriptor({ surface: "tab", id, label, path, icon, group, order,
   *   requiredScopes })`: announced to dashboards in the gateway hello and the `plugins.uiDescriptors` RPC as
   *   `controlUiTabs`, with `requiresGatewayAuth: true` when `path` lies under a gateway-auth route of the same plugin.
   *   The Control UI renders `path` in `<iframe sandbox="allow-scripts">` (`gateway.controlUi.embedSandbox`). The
   *   custom-plugin-UI setting (Settings → Labs → Custom plugin UI, `gateway.controlUi.experimental.customPlugins`)
   *   gates plugin JavaScript run in the Control UI itself; `plugins.uiDescriptors` lists this framed tab without it
   *   (this gateway leaves it off), and the Control UI's tab page frames a `path` before any such check. Not tried in
   *   a browser here.
   * - `api.registerTool({ name, label, description, parameters: <JSON Schema>, execute(toolCallId, params) })` resolving
   *   `{ content: [{ type: "text", text }], details }`; throw to fail. OpenClaw offers a tool only when the manifest
   *   declares it (`contracts.tools`). Registered in the full load, they are in the main session's inventory
   *   (`tools.effective`; the stub model sees them through OpenClaw's tool search, not in its direct tool list).
   * - Without a model: `POST /tools/invoke { tool, args }` with the gateway bearer runs a tool through OpenClaw's own
   *   policy and registry and answers `{ ok: true, result }` (a thrown error: 500, message withheld).
   */

  /** A GET as a browser or curl makes it, with OpenClaw's gateway token as the bearer when given one. */
  const gatewayGet = (path: string, token?: string) =>
    fetch(`${gateway.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  /** A tool call through OpenClaw's own invocation path, POST /tools/invoke: its policy and its tool registry, no model. */
  const invokeTool = async (tool: string, args: Record<string, unknown>) => {
    const response = await fetch(`${gateway.url}/tools/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${gatewayToken}`, "content-type": "application/json" },
      body: JSON.stringify({ tool, args }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return {
      text,
      answer: JSON.parse(text) as { ok: boolean; result: { content: { text: string }[]; details: unknown } },
    };
  };
  /** A mapped request carrying the plugin's token in its header, as a sender sends it; answers its request id. */
  const sendInspected = async () => {
    const check = `inspect-${hex(4)}`;
    const response = await post("/intake/monitor", { check, state: "degraded" });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toBeTruthy();
    return { check, requestId: requestId! };
  };

  it("the inspector's pages (list, detail, dry run) and API answer with OpenClaw's gateway auth only", async () => {
    const { requestId } = await sendInspected();
    // The hook token is not OpenClaw's: it opens the intake, not the inspector. (OpenClaw slows each wrong token
    // down, by seconds after a few, so the test tries one.)
    const refusals = [
      [INSPECTOR_PATH, undefined],
      [`${INSPECTOR_PATH}/api/requests`, undefined],
      [`${INSPECTOR_PATH}/api/requests`, pluginToken],
    ] as const;
    for (const [path, token] of refusals) {
      const refused = await gatewayGet(path, token);
      expect(refused.status, `${path} with ${token === undefined ? "no token" : "the hook token"}`).toBe(401);
      expect(await refused.text()).not.toContain(requestId);
    }
    const api = await gatewayGet(`${INSPECTOR_PATH}/api/requests?hook=monitor`, gatewayToken);
    expect(api.status).toBe(200);
    const listed = await api.text();
    expect(listed).toContain(requestId);
    const key = (JSON.parse(listed) as { requests: { id: string; requestId: string }[] }).requests.find(
      (row) => row.requestId === requestId,
    )!.id;
    // The pages the Control UI tab frames: plain HTML, each a GET, the request in every one.
    const pages = [
      INSPECTOR_PATH,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(key)}`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(key)}/dry-run`,
    ];
    const bodies = [listed];
    for (const path of pages) {
      const refused = await gatewayGet(path);
      expect(refused.status, `${path} without auth`).toBe(401);
      expect(await refused.text()).not.toContain(requestId);
      const page = await gatewayGet(path, gatewayToken);
      expect(page.status, path).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors 'self'$/);
      const html = await page.text();
      expect(html, path).toContain(requestId);
      expect(html, path).not.toMatch(/<script/i);
      bodies.push(html);
    }
    for (const body of bodies) {
      for (const secret of [pluginToken, gatewayToken, builtInToken]) expect(body).not.toContain(secret);
    }
  });

  it(
    "OpenClaw announces the inspector's Control UI tab, framed on its gateway-auth route",
    async () => {
      const call = await gateway.cli([
        "gateway",
        "call",
        "plugins.uiDescriptors",
        "--json",
        "--port",
        String(gateway.port),
      ]);
      expect(call.code, call.stderr).toBe(0);
      const descriptors = JSON.parse(call.stdout) as { controlUiTabs?: unknown[] };
      expect(descriptors.controlUiTabs).toContainEqual(
        expect.objectContaining({
          pluginId: "hooks-intake",
          id: "inspector",
          label: "Webhooks",
          path: INSPECTOR_PATH,
          // OpenClaw found the path under this plugin's own gateway-auth route: the frame gets its cookie grant.
          requiresGatewayAuth: true,
        }),
      );
    },
    OPENCLAW_CLI_TIMEOUT_MS,
  );

  it("the assistant's tools, called through OpenClaw, return a redacted record of a request", async () => {
    const { check, requestId } = await sendInspected();
    const recent = await invokeTool(INSPECTOR_TOOL_NAMES.recent, { hook: "monitor", text: requestId });
    expect(recent.answer.ok).toBe(true);
    const [summary] = (recent.answer.result.details as { requests: { id: string }[] }).requests;
    expect(summary).toMatchObject({ requestId, status: 200, hook: "monitor", mappingId: "monitor" });

    const detail = await invokeTool(INSPECTOR_TOOL_NAMES.detail, { id: summary!.id });
    expect(detail.answer.result.details).toMatchObject({
      requestId,
      body: { value: { check, state: "degraded" } },
    });
    // The credential header is shown redacted, or not kept at all.
    const { headers } = detail.answer.result.details as { headers?: Record<string, string> };
    expect(headers?.["content-type"]).toBe("application/json");
    expect(headers?.["authorization"] ?? "[redacted]").toBe("[redacted]");
    // The model reads the text part: the same record.
    expect(detail.answer.result.content[0]!.text).toContain(check);

    const dryRun = await invokeTool(INSPECTOR_TOOL_NAMES.dryRun, { id: summary!.id });
    expect(dryRun.answer.result.details).toMatchObject({ status: 200, mappingId: "monitor" });
    // "It got a 401 and I cannot see why": a refusal is listed too, without the token it was sent with.
    const refused = await post("/intake/monitor", { check, state: "refused" }, wrongToken);
    expect(refused.status).toBe(401);
    const refusals = await invokeTool(INSPECTOR_TOOL_NAMES.recent, {
      status: "401",
      text: refused.headers.get("x-request-id"),
    });
    expect((refusals.answer.result.details as { requests: unknown[] }).requests).toEqual([
      expect.objectContaining({ hook: "monitor", status: 401, state: "refused" }),
    ]);
    for (const { text } of [recent, detail, dryRun, refusals]) {
      for (const secret of [pluginToken, gatewayToken, wrongToken]) expect(text).not.toContain(secret);
    }
  });

  it(
    "the main session's effective tools include the three, from this plugin",
    async () => {
      // The inventory OpenClaw's tool search offers the model in the session wakes run in.
      const call = await gateway.cli([
        "gateway",
        "call",
        "tools.effective",
        "--json",
        "--port",
        String(gateway.port),
        "--params",
        JSON.stringify({ sessionKey: "agent:main:main" }),
      ]);
      expect(call.code, call.stdout + call.stderr).toBe(0);
      const inventory = JSON.parse(call.stdout) as {
        groups: { tools: { id: string; source: string; pluginId?: string }[] }[];
      };
      const ours = inventory.groups
        .flatMap((group) => group.tools)
        .filter((tool) => tool.pluginId === "hooks-intake");
      expect(ours.map((tool) => tool.id).sort()).toEqual(Object.values(INSPECTOR_TOOL_NAMES).sort());
    },
    OPENCLAW_CLI_TIMEOUT_MS,
  );

  // Hot reload, on the same gateway: these come last, since they change the plugin's config under the tests above.

  /** Replaces OpenClaw's config file the way an editor saves: a new file renamed over it (a plain write is seen too). */
  const replaceConfig = async (text: string) => {
    const temp = `${gateway.configPath}.${hex(4)}.tmp`;
    await writeFile(temp, text, { mode: 0o600 });
    await rename(temp, gateway.configPath);
  };
  /** Edits the plugin's entry in the running gateway's config; returns the file as it was, to restore it. */
  const editPluginConfig = async (edit: (config: PluginConfig) => void): Promise<string> => {
    const before = await readFile(gateway.configPath, "utf8");
    const openclaw = JSON.parse(before) as { plugins: { entries: Record<string, { config: PluginConfig }> } };
    edit(openclaw.plugins.entries["hooks-intake"]!.config);
    await replaceConfig(`${JSON.stringify(openclaw, null, 2)}\n`);
    return before;
  };
  /** Retries `attempt` until it gives a value: OpenClaw pushes nothing when a reload starts or ends, so tests poll. */
  const until = async <T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + RELOAD_TIMEOUT_MS;
    for (;;) {
      const result = await attempt();
      if (result !== undefined) return result;
      if (Date.now() > deadline) {
        throw new Error(
          `${what} not within ${RELOAD_TIMEOUT_MS} ms\n--- gateway log\n${gateway.logText().slice(-8_000)}`,
        );
      }
      await sleep(RETRY_INTERVAL_MS);
    }
  };
  /**
   * POSTs a fresh body to `path` until the answer has `status`; returns that answer and the body it was for. Other
   * answers are dropped: the old registration's, OpenClaw's 500 mid-swap, a connection it reset on retiring the old
   * instance (each attempt has its own body, so one that was taken after all is not mistaken for the answered one).
   */
  const postUntil = <T>(what: string, path: string, body: () => T, status: number) =>
    until(what, async () => {
      const sent = body();
      const response = await post(path, sent).catch(() => undefined);
      if (response?.status === status) return { response, sent };
      await response?.arrayBuffer();
      return undefined;
    });
  /** Waits until OpenClaw's /readyz answers 200: during a plugin's replacement or rollback it answers 503 ("plugin-reload"). */
  const reloadSettled = () =>
    until("OpenClaw ready after the reload", async () => {
      const response = await fetch(`${gateway.url}/readyz`).catch(() => undefined);
      await response?.arrayBuffer();
      return response?.status === 200 ? true : undefined;
    });
  /** Service starts the plugin logged: lines of OpenClaw's JSON log file (its stdout copy is left out). */
  const serviceStarts = () =>
    gateway
      .logText()
      .split("\n")
      .filter((line) => line.startsWith("{") && line.includes('"message":"webhook intake serving /intake'))
      .length;

  it(
    "a config edit re-registers the plugin in place: a new mapping answers, the old routes and a wake queued before the reload reach the model once",
    async () => {
      const startsBefore = serviceStarts();
      // Queued in OpenClaw by this registration and read by no heartbeat yet: the next registration must leave it.
      const queued = `QUEUED-BEFORE-RELOAD-${hex(6)}`;
      expect((await post("/intake/wake", { text: queued, mode: "next-heartbeat" })).status).toBe(200);
      await editPluginConfig((config) => {
        config.mappings.push({
          id: "deploy",
          match: { path: "deploy" },
          action: "wake",
          // The checks below share one heartbeat: OpenClaw defers a sixth within 60 s, and the tests above ran four.
          wakeMode: "next-heartbeat",
          textTemplate: "Deploy {{payload.service}} finished",
        });
      });
      // Until the new registration serves, the old one answers 404 for the unknown path.
      const deployed = await postUntil(
        "the new mapping",
        "/intake/deploy",
        () => ({ service: `api-${hex(4)}` }),
        200,
      );
      expect(await deployed.response.json()).toMatchObject({ ok: true, mappingId: "deploy" });
      const { service } = deployed.sent;
      // The new routes answer before OpenClaw has retired the old instance; what follows runs after the reload.
      await reloadSettled();

      const marker = `RELOADED-${hex(6)}`;
      const wake = await post("/intake/wake", { text: marker, mode: "next-heartbeat" });
      expect(wake.status).toBe(200);
      const check = `cpu-${hex(4)}`;
      const monitor = await post("/intake/monitor", { check, state: "recovered" });
      expect(monitor.status).toBe(200);
      expect(await monitor.json()).toMatchObject({ ok: true, mappingId: "monitor" });

      const texts = [queued, `Deploy ${service} finished`, marker, `Monitor ${check} is recovered`];
      for (const text of texts) await prompt((each) => each.includes(text));
      expect(await prompt((text) => text.includes(marker))).toMatch(
        new RegExp(
          `EXTERNAL_UNTRUSTED_CONTENT[^>]*>>>[\\s\\S]*${marker}[\\s\\S]*END_EXTERNAL_UNTRUSTED_CONTENT`,
        ),
      );
      // Each event reached the model once, and the new registration started its service once.
      const seen = stub.prompts.join("\n");
      for (const text of texts) expect(seen.split(text).length - 1, text).toBe(1);
      expect(serviceStarts() - startsBefore).toBe(1);
    },
    RELOAD_TIMEOUT_MS + PROMPT_TIMEOUT_MS + 10_000,
  );

  it(
    "a reload onto OpenClaw's own /hooks is refused, naming both keys in the log; the previous config keeps serving",
    async () => {
      const valid = await editPluginConfig((config) => {
        config.path = "/hooks";
      });
      try {
        await until("the plugin's refusal in the gateway log", async () =>
          OVERLAP_ERROR.test(gateway.logText()) ? true : undefined,
        );
        // OpenClaw then registers the previous config again; meanwhile /intake answers 500 or holds the request, and
        // an agent turn started before the rollback has finished is refused ("Gateway is draining").
        await reloadSettled();
        // An agent turn shows the service runs: a wake's heartbeat would wait out OpenClaw's flood guard.
        const task = hex(6);
        const accepted = await post("/intake/agent", { message: `AGENT-TASK-${task}`, name: "Rollback" });
        expect(accepted.status).toBe(202);
        expect(await accepted.json()).toMatchObject({ ok: true });
        await prompt((text) => text.includes(`AGENT-TASK-${task}`));
        // The refused registration never took /hooks: OpenClaw's handler still answers there.
        expect((await post("/hooks/wake", { text: "never" }, pluginToken)).status).toBe(401);
      } finally {
        // OpenClaw leaves the refused edit on disk, where a restart would trip over it. The file then matches the
        // running config again, so OpenClaw sees nothing to reload.
        await replaceConfig(valid);
      }
    },
    2 * RELOAD_TIMEOUT_MS + PROMPT_TIMEOUT_MS + 10_000,
  );

  it("after the reloads no token reaches a log or the model either", () => {
    for (const secret of [pluginToken, builtInToken, gatewayToken, wrongToken]) {
      expect(gateway.containsInLogs(secret)).toBe(false);
      expect(stub.prompts.some((text) => text.includes(secret))).toBe(false);
    }
  });
});

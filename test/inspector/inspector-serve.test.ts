/** @module `hooks serve` and the inspector: the one line it prints logs in, the key reaches no log, and a restart lists what came before. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { INSPECTOR_LINK_FILE } from "../../src/cli/serve.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { createJournalInspector } from "../../src/inspector/journal-inspector.js";
import { readRecentSummaries } from "../../src/inspector/recent-summaries.js";
import { SummaryRing } from "../../src/inspector/summary-ring.js";
import { AUTH, baseConfig, postJson, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, startServe } from "../helpers/cli.js";

afterEach(cleanupCli);

async function logIn(inspectorUrl: string, key: string): Promise<string> {
  const response = await fetch(`${inspectorUrl}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key }),
  });
  expect(response.status).toBe(200);
  return response.headers.get("set-cookie")!.split(";")[0]!;
}

/** The gateway on a free port, its state in `dir/state`, logging nothing. */
function gatewayIn(dir: string, config: unknown = baseConfig()): Promise<GatewayHandle> {
  return startGateway({
    config,
    configDir: dir,
    port: 0,
    stateDir: `${dir}/state`,
    logger: silentGatewayLogger,
  });
}

describe("hooks serve and the inspector", () => {
  it("prints one inspector line whose link logs in to a terminal; the key is in no log", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig());
    const logFile = path.join(dir, "gateway.log");
    const serve = await startServe(
      ["--config", config, "--state-dir", `${dir}/state`, "--log-file", logFile],
      { terminal: true },
    );
    const lines = serve
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("inspector: "));
    expect(lines).toHaveLength(1);
    const link = new URL(lines[0]!.slice("inspector: ".length));
    expect(link.pathname).toBe("/inspector");
    expect(link.port).not.toBe(new URL(serve.url).port);
    const key = /^#key=([\w-]{32})$/.exec(link.hash)![1]!;
    const base = `${link.origin}${link.pathname}`;
    const cookie = await logIn(base, key);
    expect((await postJson(`${serve.url}/hooks/wake`, { text: "logged" }, AUTH)).status).toBe(200);
    const listed = await fetch(`${base}/api/requests`, { headers: { cookie } });
    expect(listed.status).toBe(200);
    serve.signal("SIGTERM");
    await serve.exited;
    const log = readFileSync(logFile, "utf8");
    expect(log).toMatch(/stopped/);
    expect(log).not.toContain(key);
    expect(serve.stdout().split(key)).toHaveLength(2);
  });

  it("with nobody at a terminal (a service's log) leaves the link in a file of mode 0600, removed at stop", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig());
    const state = path.join(dir, "state");
    const serve = await startServe(["--config", config, "--state-dir", state]);
    const file = path.join(state, INSPECTOR_LINK_FILE);
    const line = serve
      .stdout()
      .split("\n")
      .find((text) => text.startsWith("inspector: "))!;
    expect(line).toMatch(
      /^inspector: http:\/\/127\.0\.0\.1:\d+\/inspector \(its login link is in .+, readable by this user only\)$/,
    );
    expect(line).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const link = new URL(readFileSync(file, "utf8").trim());
    const key = /^#key=([\w-]{32})$/.exec(link.hash)![1]!;
    expect(serve.stdout()).not.toContain(key);
    await logIn(`${link.origin}${link.pathname}`, key);
    serve.signal("SIGTERM");
    await serve.exited;
    expect(existsSync(file)).toBe(false);
  });

  it("with a configured key prints no key, and that key logs in", async () => {
    const dir = makeTempDir();
    const key = "configured-inspector-key-0123456789";
    const config = writeConfig(dir, baseConfig({ server: { inspector: { key: "${INSPECTOR_KEY}" } } }));
    const serve = await startServe(["--config", config, "--state-dir", `${dir}/state`], {
      env: { INSPECTOR_KEY: key },
    });
    const line = serve
      .stdout()
      .split("\n")
      .find((text) => text.startsWith("inspector: "))!;
    expect(line).toMatch(
      /^inspector: http:\/\/127\.0\.0\.1:\d+\/inspector \(log in with server\.inspector\.key\)$/,
    );
    expect(serve.stdout()).not.toContain(key);
    await logIn(line.split(" ")[1]!, key);
  });

  it("is off with server.inspector.enabled false: no line, no port", async () => {
    const dir = makeTempDir();
    const gateway = await gatewayIn(dir, baseConfig({ server: { inspector: { enabled: false } } }));
    expect(gateway.inspectorUrl).toBeUndefined();
    expect(gateway.inspectorKey).toBeUndefined();
    await gateway.close();
  });

  it("a second gateway whose inspector port is taken still serves, and says which setting to change", async () => {
    const dir = makeTempDir();
    const first = await startGateway({
      config: baseConfig(),
      configDir: dir,
      port: 0,
      stateDir: `${dir}/one`,
      logger: silentGatewayLogger,
    });
    const warnings: string[] = [];
    const second = await startGateway({
      config: baseConfig(),
      configDir: dir,
      port: 0,
      inspectorPort: first.inspectorUrl ? Number(new URL(first.inspectorUrl).port) : -1,
      stateDir: `${dir}/two`,
      logger: { ...silentGatewayLogger, warn: (message: string) => warnings.push(message) },
    });
    try {
      expect(second.inspectorUrl).toBeUndefined();
      expect(warnings).toEqual([
        expect.stringMatching(/^inspector not started: .*EADDRINUSE.*server\.inspector\.port/),
      ]);
      expect((await postJson(`${second.url}/hooks/wake`, { text: "still served" }, AUTH)).status).toBe(200);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it("a request target that is not a path (`//`) is answered, and the gateway lives on", async () => {
    const dir = makeTempDir();
    const gateway = await gatewayIn(dir);
    try {
      const inspector = new URL(gateway.inspectorUrl!);
      for (const target of ["//", "///", "//x:99999/inspector"]) {
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = connect(Number(inspector.port), inspector.hostname, () =>
            socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
          );
          let text = "";
          socket.on("data", (chunk) => {
            text += chunk;
          });
          socket.on("end", () => resolve(text));
          socket.on("error", reject);
        });
        expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      }
      expect((await postJson(`${gateway.url}/hooks/wake`, { text: "alive" }, AUTH)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it("lists only the refusals the journal kept: a flood past its limit pushes no real request out", async () => {
    const dir = makeTempDir();
    const gateway = await gatewayIn(dir, baseConfig({}, { journal: { refusedPerMinute: 2 } }));
    try {
      expect((await postJson(`${gateway.url}/hooks/wake`, { text: "real" }, AUTH)).status).toBe(200);
      for (let i = 0; i < 10; i++)
        expect((await postJson(`${gateway.url}/hooks/wake`, { text: "flood" }, {})).status).toBe(401);
      const cookie = await logIn(gateway.inspectorUrl!, gateway.inspectorKey!);
      const listed = (await (
        await fetch(`${gateway.inspectorUrl}/api/requests`, { headers: { cookie } })
      ).json()) as { requests: { status: number }[] };
      expect(listed.requests.map((row) => row.status)).toEqual([401, 401, 200]);
    } finally {
      await gateway.close();
    }
  });

  it("after a restart lists the requests of the previous run, read from the journal", async () => {
    const dir = makeTempDir();
    const start = () => gatewayIn(dir);
    const first = await start();
    const sent = await postJson(`${first.url}/hooks/wake`, { text: "before the restart" }, AUTH);
    const requestId = sent.headers.get("x-request-id")!;
    await first.close();
    const second = await start();
    try {
      const cookie = await logIn(second.inspectorUrl!, second.inspectorKey!);
      const listed = (await (
        await fetch(`${second.inspectorUrl}/api/requests`, { headers: { cookie } })
      ).json()) as { requests: { id: string }[] };
      const rows = listed.requests;
      expect(rows).toEqual([
        expect.objectContaining({ requestId, hook: "wake", status: 200, state: "done" }),
      ]);
      const detail = (await (
        await fetch(`${second.inspectorUrl}/api/requests/${rows[0]!.id}`, { headers: { cookie } })
      ).json()) as { body: { value: unknown } };
      expect(detail.body.value).toEqual({ text: "before the restart" });
    } finally {
      await second.close();
    }
  });

  it("lists from memory, and reads older requests than it holds from the journal only when asked", async () => {
    const dir = makeTempDir();
    const gateway = await gatewayIn(dir);
    const sent: string[] = [];
    for (const text of ["one", "two", "three"]) {
      const answer = await postJson(`${gateway.url}/hooks/wake`, { text }, AUTH);
      sent.push(answer.headers.get("x-request-id")!);
    }
    await gateway.close();
    const journalDir = path.join(dir, "state", "hooks-journal");
    const ring = new SummaryRing(2);
    ring.seed(await readRecentSummaries(journalDir, ring.size));
    const source = createJournalInspector({ ring, journalDir, live: () => undefined });
    const live = await source.list({});
    expect(live.map((row) => row.requestId)).toEqual([sent[2], sent[1]]);
    const older = await source.list({ before: live.at(-1)!.at });
    expect(older.map((row) => row.requestId)).toEqual([sent[0]]);
    expect(await source.list({ before: live.at(-1)!.at, text: "no-such" })).toEqual([]);
    await source.close();
  });

  it("without a journal lists what arrives from now on and says how to keep more", async () => {
    const dir = makeTempDir();
    const gateway = await gatewayIn(dir, baseConfig({}, { journal: { enabled: false } }));
    try {
      const cookie = await logIn(gateway.inspectorUrl!, gateway.inspectorKey!);
      const page = await (await fetch(gateway.inspectorUrl!, { headers: { cookie } })).text();
      expect(page).toContain('data-journaling="false"');
      const sent = await postJson(`${gateway.url}/hooks/wake`, { text: "unjournaled" }, AUTH);
      const requestId = sent.headers.get("x-request-id")!;
      const listed = (await (
        await fetch(`${gateway.inspectorUrl}/api/requests`, { headers: { cookie } })
      ).json()) as { journaling: boolean; requests: { id: string }[] };
      expect(listed.journaling).toBe(false);
      expect(listed.requests).toEqual([
        expect.objectContaining({ requestId, hook: "wake", status: 200, state: "done" }),
      ]);
      const detail = (await (
        await fetch(`${gateway.inspectorUrl}/api/requests/${requestId}`, { headers: { cookie } })
      ).json()) as { note: string; body?: unknown };
      expect(detail.note).toMatch(/journal is off/);
      expect(detail.body).toBeUndefined();
    } finally {
      await gateway.close();
    }
  });
});

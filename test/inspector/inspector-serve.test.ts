/** @module `hooks serve` and the inspector: the one line it prints logs in, the key reaches no log, and a restart lists what came before. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
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

describe("hooks serve and the inspector", () => {
  it("prints one inspector line whose link logs in; the key is in no log", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig());
    const logFile = path.join(dir, "gateway.log");
    const serve = await startServe([
      "--config",
      config,
      "--state-dir",
      `${dir}/state`,
      "--log-file",
      logFile,
    ]);
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
    const gateway = await startGateway({
      config: baseConfig({ server: { inspector: { enabled: false } } }),
      configDir: dir,
      port: 0,
      stateDir: `${dir}/state`,
      logger: silentGatewayLogger,
    });
    expect(gateway.inspectorUrl).toBeUndefined();
    expect(gateway.inspectorKey).toBeUndefined();
    await gateway.close();
  });

  it("after a restart lists the requests of the previous run, read from the journal", async () => {
    const dir = makeTempDir();
    const start = () =>
      startGateway({
        config: baseConfig(),
        configDir: dir,
        port: 0,
        stateDir: `${dir}/state`,
        logger: silentGatewayLogger,
      });
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
    const gateway = await startGateway({
      config: baseConfig(),
      configDir: dir,
      port: 0,
      stateDir: `${dir}/state`,
      logger: silentGatewayLogger,
    });
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
});

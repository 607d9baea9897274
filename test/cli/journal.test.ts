/** @module `hooks journal list | show | replay` on a journal written by the real plugin over real HTTP. */
import { execFile } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import JSON5 from "json5";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hooksCommand } from "../../src/gateway/hooks-command.js";
import { createHooksPlugin } from "../../src/index.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "journal-cli-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const HOOKS = {
  enabled: true,
  token: TOKEN,
  mappings: [
    {
      id: "deploys",
      match: { path: "deploys" },
      action: "wake",
      textTemplate: "deploy of {{service}} finished",
    },
  ],
};

let host: TestHost | undefined;
let stateDir: string;
let configFile: string;
const ids: Record<string, string> = {};

async function send(hook: string, body: unknown, headers: Record<string, string> = AUTH): Promise<string> {
  const response = await fetch(`${host!.url}/hooks/${hook}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  await response.text();
  const requestId = response.headers.get("x-request-id")!;
  await host!.waitForEvent("hooks:request", (event) => event.source.requestId === requestId);
  return requestId;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(["journal", ...args, "--config", configFile, "--state-dir", stateDir]);
}

beforeEach(async () => {
  stateDir = makeTempDir("journal-cli-");
  configFile = path.join(stateDir, "gateway.json5");
  writeFileSync(configFile, JSON.stringify({ hooks: HOOKS }));
  host = await startTestHost(createHooksPlugin(), { hooks: HOOKS }, { stateDir });
  ids.wake = await send("wake", { text: "the secret plans" });
  ids.mapped = await send("deploys", { service: "billing" });
  ids.refused = await send("wake", { nope: 1 });
  ids.keyed = await send("wake", { text: "once a night" }, { ...AUTH, "idempotency-key": "nightly-7" });
  await host.close();
  host = undefined;
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await cleanupCli();
});

describe("hooks journal list", () => {
  it("lists every request with its status and what became of it, oldest first", async () => {
    const { code, stdout } = await run(["list"]);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`200  done +wake +${ids.wake}$`));
    expect(lines[1]).toMatch(new RegExp(`200  done +deploys +${ids.mapped}  mapping=deploys$`));
    expect(lines[2]).toMatch(
      new RegExp(`400  refused INVALID_PAYLOAD +wake +${ids.refused}  client=127\\.0\\.0\\.1$`),
    );
    expect(lines[3]).toMatch(new RegExp(`200  done +wake +${ids.keyed}$`));
  });

  it("filters by status class, state and hook, and prints JSON lines", async () => {
    expect((await run(["list", "--status", "4xx"])).stdout).toContain(ids.refused);
    expect((await run(["list", "--status", "4xx"])).stdout).not.toContain(ids.wake);
    const byHook = await run(["list", "--hook", "deploys", "--json"]);
    const entries = byHook.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({ id: ids.mapped, state: "done", mappingId: "deploys" }),
    ]);
    expect((await run(["list", "--status", "pending"])).stdout).toContain("no requests");
  });

  it("filters by time: --since a date to come lists nothing, --since an hour ago lists all", async () => {
    expect((await run(["list", "--since", "2999-01-01"])).stdout).toContain("no requests");
    expect((await run(["list", "--since", "1h"])).stdout.trim().split("\n")).toHaveLength(4);
  });

  it("refuses a filter it cannot read, as a usage error", async () => {
    const { code, stderr } = await run(["list", "--since", "yesterday-ish"]);
    expect(code).toBe(2);
    expect(stderr).toContain("must be a duration such as 30m");
  });
});

describe("hooks journal show", () => {
  it("shows the record's ids and outcome but never the payload's text", async () => {
    const { code, stdout } = await run(["show", ids.wake!]);
    expect(code).toBe(0);
    expect(stdout).toContain(`request   ${ids.wake}`);
    expect(stdout).toMatch(/state +done at/);
    expect(stdout).toMatch(/session:system-event +eventId=\S+ session=main/);
    expect(stdout).toContain("POST /hooks/wake");
    expect(stdout).not.toContain("secret plans");
    expect(stdout).not.toContain("authorization");
  });

  it("exits 1 with a clear message for an unknown id", async () => {
    const { code, stderr } = await run(["show", "no-such-request"]);
    expect(code).toBe(1);
    expect(stderr).toContain("no request no-such-request in the journal");
  });
});

describe("hooks journal replay", () => {
  it("runs the stored request through the pipeline again (dry run)", async () => {
    const { code, stdout } = await run(["replay", ids.mapped!, "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.status).toBe(200);
    expect(report.mappingId).toBe("deploys");
    expect(report.events[0].payload.raw).toBe("deploy of billing finished");
  });

  it("writes a JSON5 fixture shaped like a capture, owner-only even over an existing file, that hooks replay accepts", async () => {
    const file = path.join(stateDir, "replayed.json5");
    writeFileSync(file, "an older file anyone could read\n", { mode: 0o644 });
    expect((await run(["replay", ids.mapped!, "--fixture", file])).code).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^\/\/ Taken from the journal \(request id [^)]+\); credentials removed\.\n/);
    expect(text).toContain('\n    bodyJson: {\n      service: "billing",\n    },\n');
    const fixture = JSON5.parse(text);
    expect(fixture).toEqual({
      name: expect.stringMatching(/^deploys at \d{4}-/),
      description: `request ${ids.mapped}, taken from the journal`,
      request: {
        method: "POST",
        path: "deploys",
        // What fetch sent beside the body: everything but credentials and transfer headers.
        headers: expect.objectContaining({ "content-type": "application/json", "user-agent": "node" }),
        bodyJson: { service: "billing" },
        rawBody: '{"service":"billing"}',
      },
    });
    expect(Object.keys(fixture.request.headers)).not.toContain("authorization");
    expect(Object.keys(fixture.request.headers)).not.toContain("content-length");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const replayed = await runCli(["replay", file, "--config", configFile, "--json"]);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout).reports[0].status).toBe(200);

    // A .json name gets the same shape as plain JSON, for tools that read JSON only.
    const json = path.join(stateDir, "replayed.json");
    expect((await run(["replay", ids.mapped!, "--fixture", json])).code).toBe(0);
    expect(JSON.parse(readFileSync(json, "utf8"))).toEqual(fixture);
  });

  it("names in the fixture's Replay line a command that runs where it was written, outside a checkout", async () => {
    const { npm_command: _command, npm_lifecycle_event: _event, ...outsideNpm } = process.env;
    const file = path.join(stateDir, "replay me.json5");
    const wrote = await runCli(
      ["journal", "replay", ids.mapped!, "--fixture", file, "--state-dir", stateDir],
      { cwd: stateDir, env: { npm_command: undefined, npm_lifecycle_event: undefined } },
    );
    expect(wrote.code).toBe(0);
    const line = readFileSync(file, "utf8").match(/^\/\/ Replay: (.+)$/m)?.[1];
    expect(line).toBe(`${hooksCommand(outsideNpm, stateDir)} replay '${file}'`);
    // Run from the folder that holds gateway.json5, as a user who wrote the fixture there would.
    const replayed = await promisify(execFile)("sh", ["-c", `${line} --json`], {
      cwd: stateDir,
      env: outsideNpm,
    });
    expect(JSON.parse(replayed.stdout).reports[0]).toMatchObject({ status: 200, mappingId: "deploys" });
  });

  it("sends it to a running gateway with --send and says what the gateway did", async () => {
    host = await startTestHost(
      createHooksPlugin(),
      { hooks: HOOKS },
      { stateDir: makeTempDir("journal-cli-2-") },
    );
    const { code, stdout } = await run(["replay", ids.wake!, "--send", host.url]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^200 accepted: eventId=\S+\n$/);
    const [event] = await Promise.all([host.waitForEvent("session:system-event")]);
    expect(event.raw).toBe("the secret plans");
  });

  it("says 'duplicate: nothing done' when the gateway had accepted the request's delivery id already", async () => {
    host = await startTestHost(
      createHooksPlugin(),
      { hooks: HOOKS },
      { stateDir: makeTempDir("journal-cli-3-") },
    );
    const first = await run(["replay", ids.keyed!, "--send", host.url]);
    expect(first.stdout).toMatch(/^200 accepted: eventId=(\S+)\n$/);
    const eventId = first.stdout.match(/eventId=(\S+)/)![1];
    const again = await run(["replay", ids.keyed!, "--send", host.url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `200 duplicate: nothing done (the gateway had already accepted this delivery id; its first answer: eventId=${eventId})\n`,
    );
    const json = await run(["replay", ids.keyed!, "--send", host.url, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 200, duplicate: true });
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
  });

  it("says why a refused request cannot be replayed", async () => {
    const { code, stderr } = await run(["replay", ids.refused!]);
    expect(code).toBe(1);
    expect(stderr).toContain("was not accepted (400)");
  });
});

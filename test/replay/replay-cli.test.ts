import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, runCli, startServe } from "../helpers/cli.js";
import { FIXTURES, TRANSFORMS_DIR } from "../helpers/repo.js";

const TOKEN = "replay-cli-token-0123456789abcdefgh";
afterEach(cleanupCli);

/** A config of our own so these tests do not depend on the demo's mappings. */
function writeConfig(dir: string): string {
  const file = path.join(dir, "gateway.json5");
  const config = {
    hooks: {
      enabled: true,
      token: TOKEN,
      transformsDir: TRANSFORMS_DIR,
      mappings: [
        { id: "stripe-only", match: { source: "stripe" }, messageTemplate: "stripe" },
        {
          id: "push",
          match: { path: "github/push" },
          name: "Push {{ repository.name }}",
          sessionKey: "hook:gh:{{ repository.full_name }}",
          messageTemplate: "{{ pusher.name }}: {{ head_commit.message }}",
          deliver: false,
        },
        {
          id: "skipper",
          match: { path: "skip" },
          messageTemplate: "kept {{ v }}",
          transform: { module: "skip-or-keep.ts" },
        },
        { id: "exploder", match: { path: "explode" }, transform: { module: "broken/error-runtime.ts" } },
      ],
    },
  };
  writeFileSync(file, JSON5.stringify(config, null, 2));
  return file;
}

function writeFixture(dir: string, name: string, fixture: Record<string, unknown>): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON5.stringify(fixture, null, 2));
  return file;
}

const pushFixture = (dir: string) =>
  writeFixture(dir, "push.json5", {
    name: "push",
    request: { path: "github/push", bodyFile: path.join(FIXTURES, "payloads/github/push.json") },
  });

function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

describe("hooks replay", () => {
  it("shows the chosen mapping, why earlier ones did not match, rendered fields, actions, events and status", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const { code, stdout } = await runCli(["replay", "--config", config, pushFixture(dir)], { cwd: dir });
    expect(code).toBe(0);
    expect(stdout).toMatch(/status\s+202/);
    expect(stdout).toMatch(/· stripe-only\s+payload source is missing, mapping wants "stripe"/);
    expect(stdout).toMatch(/✓ push\s+matched path "github\/push"/);
    expect(stdout).toContain('messageTemplate  "Codertocat: Initial commit"');
    expect(stdout).toContain('"kind":"agent"');
    expect(stdout).toContain("session:agent-turn");
    expect(stdout).toContain('source="Webhook"');
    expect(stdout).toContain("hook:gh:Codertocat/Hello-World");
  });

  it("shows a mapping's instructions in the planned event's text, before the safety wrapper", async () => {
    const dir = makeTempDir();
    const config = path.join(dir, "triage.json5");
    const triage = {
      id: "triage",
      match: { path: "triage" },
      action: "wake",
      instructions: "Summarise the alert below in one line.",
      textTemplate: "{{ alert }}",
    };
    writeFileSync(config, JSON.stringify({ hooks: { enabled: true, token: TOKEN, mappings: [triage] } }));
    const fixture = writeFixture(dir, "triage-fixture.json5", {
      name: "triage",
      request: { path: "triage", body: { alert: "disk full" } },
    });
    const { code, stdout } = await runCli(["replay", "--json", "--config", config, fixture], { cwd: dir });
    expect(code).toBe(0);
    const [report] = JSON.parse(stdout).reports;
    expect(report.events[0].payload.text).toMatch(
      /^Summarise the alert below in one line\.\n\nSECURITY NOTICE[\s\S]*\ndisk full\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="[^"]+">>>$/,
    );
  });

  it("--json gives a stable shape for scripts, covering skipped, failing and unmatched fixtures", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const files = [
      writeFixture(dir, "skip.json5", { name: "skip", request: { path: "skip", body: { skip: true } } }),
      writeFixture(dir, "keep.json5", { name: "keep", request: { path: "skip", body: { v: 1 } } }),
      writeFixture(dir, "explode.json5", { name: "explode", request: { path: "explode", body: {} } }),
      writeFixture(dir, "nowhere.json5", { name: "nowhere", request: { path: "nowhere", body: {} } }),
    ];
    const { code, stdout } = await runCli(["replay", "--json", "--config", config, ...files], { cwd: dir });
    expect(code).toBe(0);
    const { reports } = JSON.parse(stdout);
    expect(reports.map((r: any) => Object.keys(r))).toEqual(
      Array(4).fill([
        "name",
        "file",
        "request",
        "status",
        "body",
        "mappingId",
        "candidates",
        "rendered",
        "transformOutput",
        "actions",
        "events",
        "logs",
      ]),
    );
    const [skip, keep, explode, nowhere] = reports;
    expect(skip).toMatchObject({
      status: 204,
      body: null,
      mappingId: "skipper",
      transformOutput: [null],
      actions: [],
      events: [],
    });
    expect(keep).toMatchObject({
      status: 202,
      transformOutput: [null],
      actions: [{ kind: "agent", message: "kept 1" }],
    });
    expect(keep.events[0].event).toBe("session:agent-turn");
    expect(explode).toMatchObject({ status: 500, mappingId: "exploder", body: { code: "MAPPING_FAILED" } });
    expect(
      explode.logs.some((l: any) => l.level === "error" && l.message.includes("transform exploded")),
    ).toBe(true);
    expect(nowhere).toMatchObject({ status: 404, mappingId: null, body: { code: "NOT_FOUND" } });
    expect(nowhere.candidates.map((c: any) => c.id)).toEqual(["stripe-only", "push", "skipper", "exploder"]);
  });

  it("writes no files: no state, no outbox, no record", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const fixture = pushFixture(dir);
    const before = listTree(dir);
    expect((await runCli(["replay", "--config", config, fixture], { cwd: dir })).code).toBe(0);
    expect(listTree(dir)).toEqual(before);
  });

  it("exits 1 with a clear message for a file that is not a fixture", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const bad = writeFixture(dir, "bad.json5", {
      name: "bad",
      request: { path: "x", body: {}, rawBody: "y" },
    });
    const { code, stderr } = await runCli(["replay", "--config", config, bad], { cwd: dir });
    expect(code).toBe(1);
    expect(stderr).toMatch(/not a valid fixture/);
    expect(stderr).toMatch(/at most one of body, rawBody, rawBodyBase64 and bodyFile/);
  });

  it("--send posts the fixture to a running gateway with the config's token", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")], {
      cwd: dir,
    });
    const { code, stdout } = await runCli(
      ["replay", "--config", config, "--send", gateway.url, "--json", pushFixture(dir)],
      { cwd: dir },
    );
    expect(code).toBe(0);
    const { sent } = JSON.parse(stdout);
    expect(sent[0]).toMatchObject({
      name: "push",
      status: 202,
      body: { ok: true, mappingId: "push", sessionKey: "hook:gh:Codertocat/Hello-World" },
    });
    const wrongToken = await runCli(
      ["replay", "--config", config, "--send", gateway.url, "--token", "wrong", pushFixture(dir)],
      { cwd: dir },
    );
    expect(wrongToken.stdout).toMatch(/push: 401/);
  });
});

describe("hooks test", () => {
  it("prints a line per fixture with the reasons of a failure, closes with the counts, exits 1", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    writeFixture(dir, "a-pass.json5", {
      name: "passes",
      request: { path: "skip", body: { v: 2 } },
      expect: {
        status: 202,
        events: [{ event: "session:agent-turn", match: { raw: "kept 2", source: { mappingId: "skipper" } } }],
      },
    });
    writeFixture(dir, "b-fail.json5", {
      name: "fails",
      request: { path: "skip", body: { v: 3 } },
      expect: { status: 200, events: [{ event: "session:agent-turn", match: { raw: "kept 999" } }] },
    });
    writeFixture(dir, "c-no-expect.json5", { name: "ignored", request: { path: "skip", body: {} } });
    writeFileSync(path.join(dir, "payload.json"), JSON.stringify({ not: "a fixture" }));
    const { code, stdout } = await runCli(["test", dir, "--config", config], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toMatch(/✓ passes/);
    expect(stdout).toMatch(/✗ fails/);
    expect(stdout).toContain("status: expected 200, got 202");
    expect(stdout).toMatch(
      /events\[0\]: no session:agent-turn event contains \{"raw":"kept 999"\}; closest: .*"raw":"kept 3"/,
    );
    expect(stdout.trim().split("\n").at(-1)).toBe("1 passed, 1 failed");
  });

  it("--update records current results so the next run passes", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const file = pushFixture(dir);
    writeFixture(dir, "skip.json5", {
      name: "skip",
      request: { path: "skip", body: { skip: true } },
      expect: { status: 500 },
    });
    const update = await runCli(["test", dir, "--config", config, "--update"], { cwd: dir });
    expect(update.code).toBe(0);
    const written = JSON5.parse(readFileSync(file, "utf8"));
    expect(written.expect.status).toBe(202);
    expect(written.expect.events[0]).toMatchObject({
      event: "session:agent-turn",
      match: { sessionKey: "hook:gh:Codertocat/Hello-World", raw: "Codertocat: Initial commit" },
    });
    // Random ids and the wrapped text (random marker) are left out so the expectation is stable.
    expect(JSON.stringify(written.expect)).not.toMatch(/runId|eventId|EXTERNAL_UNTRUSTED/);
    const rerun = await runCli(["test", dir, "--config", config], { cwd: dir });
    expect(rerun.code).toBe(0);
    expect(rerun.stdout.trim().split("\n").at(-1)).toBe("2 passed, 0 failed");
  });

  it("--update refuses to record a 5xx or a 401 as expected unless --accept-failures, and names what it left", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir);
    const exploding = writeFixture(dir, "explode.json5", {
      name: "explode",
      request: { path: "explode", body: {} },
    });
    const unauthorized = writeFixture(dir, "no-token.json5", {
      name: "no token",
      request: { path: "github/push", headers: { authorization: "Bearer wrong" }, body: {} },
    });
    const refused = await runCli(["test", dir, "--config", config, "--update"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/got 500 MAPPING_FAILED .*not recorded \(use --accept-failures/);
    expect(refused.stdout).toMatch(/got 401 UNAUTHORIZED.*not recorded/);
    expect(refused.stdout).toMatch(/2 fixture\(s\) left unchanged: .*explode\.json5, .*no-token\.json5/);
    expect(JSON5.parse(readFileSync(exploding, "utf8")).expect).toBeUndefined();
    const accepted = await runCli(["test", dir, "--config", config, "--update", "--accept-failures"], {
      cwd: dir,
    });
    expect(accepted.code).toBe(0);
    expect(JSON5.parse(readFileSync(exploding, "utf8")).expect.status).toBe(500);
    expect(JSON5.parse(readFileSync(unauthorized, "utf8")).expect.status).toBe(401);
    // Once a failure is the recorded expectation (a negative fixture), a plain --update keeps it.
    const again = await runCli(["test", dir, "--config", config, "--update"], { cwd: dir });
    expect(again.code).toBe(0);
  });

  it("passes on the shipped fixture library with the demo config", async () => {
    const dir = makeTempDir();
    cpSync(path.join(FIXTURES, "hooks"), path.join(dir, "hooks"), { recursive: true });
    cpSync(path.join(FIXTURES, "payloads"), path.join(dir, "payloads"), { recursive: true });
    const { code, stdout } = await runCli(["test", dir], { cwd: dir });
    expect(stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(Number(stdout.trim().split("\n").at(-1)!.split(" ")[0])).toBeGreaterThanOrEqual(10);
    expect(code).toBe(0);
  });
});

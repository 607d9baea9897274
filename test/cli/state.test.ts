/** @module `hooks state`: the queue, transcript, a session and the outbox as readable lines or JSON lines, read-only, also while a gateway runs. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOutbox } from "../../src/gateway/outbox.js";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { openStateDb } from "../../src/gateway/state-db.js";
import { AUTH, baseConfig, postJson, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli, runCliProcess, startServe } from "../helpers/cli.js";

afterEach(cleanupCli);

const source = { hook: "wake", requestId: "req-1" };
const WRAPPED =
  "SECURITY NOTICE: the block below is external, untrusted content.\n" +
  '<<<EXTERNAL_UNTRUSTED_CONTENT id="abc" source="Webhook">>>\nDisk almost\nfull\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="abc">>>';

/** A state directory as a gateway leaves it: a drained event and its heartbeat, one queued, a session, two deliveries. */
function seedState(): string {
  const dir = makeTempDir();
  const state = openStateDb(dir);
  const store = createSessionStore(state, undefined);
  store.enqueue({ source, sessionKey: "main", text: WRAPPED, untrusted: true, eventId: "ev-1" });
  store.drain(["hook:wake"]);
  store.enqueue({
    source: { ...source, mappingId: "gh" },
    sessionKey: "main",
    text: "queued one",
    untrusted: false,
    eventId: "ev-2",
  });
  store.appendHistory(
    "hook:ci",
    [
      { role: "user", content: "summarize\nthe build" },
      { role: "assistant", content: "all green" },
    ],
    "run-1",
  );
  const outbox = createOutbox(state);
  outbox.append({
    runId: "run-1",
    requestId: "req-2",
    hook: "agent",
    requested: "last",
    channel: "telegram",
    to: "@ops_room",
    text: "all green",
    status: "delivered",
  });
  outbox.append({
    runId: "run-2",
    requestId: "req-3",
    hook: "agent",
    requested: "last",
    channel: "whatsapp",
    text: "x".repeat(500),
    status: "undeliverable",
    reason: "no recipient",
  });
  state.close();
  return dir;
}

const ISO = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

describe("hooks state", () => {
  it("prints the transcript, the queue, a session and the outbox as one readable line per entry", async () => {
    const dir = seedState();
    const state = (...args: string[]) => runCli(["state", "--state-dir", dir, ...args]);

    const transcript = await state("transcript");
    expect(transcript.code).toBe(0);
    expect(transcript.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${ISO}  system-event  event=ev-1 hook=wake request=req-1  \\[untrusted\\] Disk almost full$`,
        ),
      ),
      expect.stringMatching(new RegExp(`^${ISO}  heartbeat     drained=1 reasons=hook:wake$`)),
    ]);

    const queue = await state("queue");
    expect(queue.stdout).toMatch(
      new RegExp(`^${ISO}  system-event  event=ev-2 hook=wake mapping=gh request=req-1  queued one\\n$`),
    );

    const session = await state("session", "hook:ci");
    expect(session.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^${ISO}  user       run=run-1  summarize the build$`)),
      expect.stringMatching(new RegExp(`^${ISO}  assistant  run=run-1  all green$`)),
    ]);

    const outbox = await state("outbox", "--limit", "5");
    const [delivered, undeliverable] = outbox.stdout.trimEnd().split("\n");
    expect(delivered).toMatch(
      new RegExp(
        `^${ISO}  delivered      telegram → @ops_room  run=run-1 hook=agent request=req-2  all green$`,
      ),
    );
    expect(undeliverable).toMatch(
      / {2}undeliverable {2}whatsapp {2}run=run-2 hook=agent request=req-3 \(no recipient\) {2}x+…$/,
    );
    expect(undeliverable!.length).toBeLessThan(250);
  });

  it("prints one JSON object per line with --json, whole texts included, and honours --limit and --since", async () => {
    const dir = seedState();
    const json = async (...args: string[]) => {
      const result = await runCli(["state", "--state-dir", dir, "--json", ...args]);
      expect(result.code).toBe(0);
      return result.stdout
        .trimEnd()
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line));
    };
    expect(await json("transcript")).toEqual([
      {
        kind: "system-event",
        at: expect.any(String),
        eventId: "ev-1",
        text: WRAPPED,
        untrusted: true,
        source,
      },
      { kind: "heartbeat", at: expect.any(String), reasons: ["hook:wake"], drained: 1 },
    ]);
    expect(await json("transcript", "--limit", "1")).toEqual([
      expect.objectContaining({ kind: "heartbeat" }),
    ]);
    expect(await json("transcript", "--since", "1h")).toHaveLength(2);
    expect(await json("session", "hook:ci", "--limit", "1")).toEqual([
      {
        sessionKey: "hook:ci",
        at: expect.any(String),
        runId: "run-1",
        role: "assistant",
        content: "all green",
      },
    ]);
    expect(await json("session", "hook:nobody")).toEqual([]);
    const outbox = await json("outbox");
    expect(outbox[1]).toMatchObject({ runId: "run-2", status: "undeliverable", reason: "no recipient" });
    expect(outbox[1].text).toHaveLength(500);
    expect(await json("queue")).toEqual([
      {
        kind: "system-event",
        at: expect.any(String),
        eventId: "ev-2",
        text: "queued one",
        untrusted: false,
        source: { ...source, mappingId: "gh" },
      },
    ]);
  });

  it("reads the database while a gateway writes it", async () => {
    const dir = makeTempDir();
    const state = path.join(dir, "state");
    const gateway = await startServe(["--config", writeConfig(dir, baseConfig()), "--state-dir", state]);
    const agent = await postJson(
      `${gateway.url}/hooks/agent`,
      { message: "hello there", sessionKey: "hook:live", sessionMode: "persistent" },
      AUTH,
    );
    await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === agent.body.runId);
    const result = await runCli(["state", "--state-dir", state, "--json", "session", "hook:live"]);
    expect(result.code).toBe(0);
    // The turn's message as the runner saw it (wrapped), then the echo runner's reply.
    expect(
      result.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line).content),
    ).toEqual([expect.stringContaining("\nhello there\n"), "hello there"]);
    // The reader left the gateway running and writing.
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "still here" }, AUTH)).status).toBe(200);
  });

  it.each([
    [["queue"], /no state database in .*: pass the --state-dir that `hooks serve` uses/],
    [["transcript", "--since", "yesterday"], /--since.*must be a duration/],
    [["outbox", "--limit", "0"], /--limit.*at least 1/],
  ])("refuses %j clearly", async (args, message) => {
    const dir = makeTempDir();
    const result = await runCli(["state", "--state-dir", dir, ...args]);
    expect(result.code).toBe(args[0] === "queue" ? 1 : 2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });
});

describe("without better-sqlite3", () => {
  it("hooks state and hooks serve both stop with one line saying what to install", async () => {
    const dir = makeTempDir();
    // As if the optional dependency had not been installed: resolving it fails, as in a plain `npm install --omit=optional`.
    const blocker = path.join(dir, "no-sqlite.cjs");
    writeFileSync(
      blocker,
      `const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "better-sqlite3") throw Object.assign(new Error("Cannot find module 'better-sqlite3'"), { code: "MODULE_NOT_FOUND" });
  return resolve.call(this, request, ...rest);
};`,
    );
    const env = { NODE_OPTIONS: `--require ${blocker}` };
    const seeded = seedState();
    const state = await runCliProcess(["state", "--state-dir", seeded, "queue"], { env });
    const serve = await runCliProcess(
      [
        "serve",
        "--port",
        "0",
        "--config",
        writeConfig(dir, baseConfig()),
        "--state-dir",
        path.join(dir, "state"),
      ],
      { env },
    );
    for (const result of [state, serve]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^hooks: the reference gateway keeps its state in SQLite and needs better-sqlite3.*npm install better-sqlite3.*\n$/,
      );
      expect(result.stdout).not.toContain("listening");
    }
  });
});

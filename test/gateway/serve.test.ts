/** @module `hooks serve` as a black box: real CLI, real HTTP, then the record, the logs and the state database. */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as v from "valibot";
import { afterEach, describe, expect, it } from "vitest";
import { HOOK_EVENT_SCHEMAS, type HookEventName } from "../../src/events.js";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, readRecord, readState, TOKEN, writeConfig } from "./support.js";

afterEach(cleanupCli);

describe("hooks serve with a config file", () => {
  it("records every event of /wake and /agent, drains the queue into the transcript on heartbeat, writes the outbox", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({ session: { lastRoute: { channel: "telegram", to: "@ops_room" } } }),
    );
    const record = path.join(dir, "events.jsonl");
    const state = path.join(dir, "state");
    const gateway = await startServe(["--config", config, "--state-dir", state, "--record", record]);

    const wake = await postJson(`${gateway.url}/hooks/wake`, { text: "disk almost full" });
    expect(wake.status).toBe(200);
    const agent = await postJson(`${gateway.url}/hooks/agent`, {
      message: "summarize the build",
      name: "CI",
    });
    expect(agent.status).toBe(202);
    const runId: string = agent.body.runId;

    // The summary's heartbeat request comes after the summary itself, so this heartbeat has drained it.
    await gateway.waitForLog((r) => r.msg === "heartbeat" && String(r.reasons).includes(`hook:${runId}`));
    await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === runId);

    const events = readRecord(record);
    const names = events.map((line) => line.event);
    expect(names).toEqual(
      expect.arrayContaining([
        "session:system-event",
        "heartbeat:request",
        "session:agent-turn",
        "session:agent-turn-finished",
        "delivery:send",
        "hooks:request",
      ]),
    );
    for (const line of events) {
      expect(Number.isNaN(Date.parse(line.at))).toBe(false);
      const parsed = v.safeParse(HOOK_EVENT_SCHEMAS[line.event as HookEventName], line.payload);
      expect(parsed.issues, `${line.event} payload`).toBeUndefined();
    }
    const wakeRequestId = wake.headers.get("x-request-id");
    const wakeEvents = events
      .filter((line) => line.payload.source.requestId === wakeRequestId)
      .map((l) => l.event);
    // The heartbeat request goes once per batch of wakes, at the end of their event-loop turn: after the answer.
    expect(wakeEvents).toEqual([
      "session:system-event",
      "session:system-event-outcome",
      "hooks:request",
      "heartbeat:request",
    ]);
    const finished = events.find((line) => line.event === "session:agent-turn-finished")!;
    expect(finished.payload).toMatchObject({ runId, status: "ok", reply: "summarize the build" });
    const delivery = events.find((line) => line.event === "delivery:send")!;
    expect(delivery.payload).toMatchObject({ runId, channel: "last", text: "summarize the build" });

    const transcript = readState(state, (reader) => reader.transcript());
    const drained = transcript.filter((entry) => entry.kind === "system-event");
    expect(drained.map((entry) => entry.eventId)).toEqual([wake.body.eventId, `${runId}:summary`]);
    expect(drained[0]!.kind === "system-event" && drained[0]!.text).toContain("disk almost full");
    // The echo runner's reply is the payload itself: its summary reaches the main session wrapped, name inside.
    expect(drained[1]!.kind === "system-event" && drained[1]!.text).toMatch(
      /^SECURITY NOTICE[\s\S]*\nCI: summarize the build\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/,
    );
    expect(transcript.some((entry) => entry.kind === "heartbeat" && entry.drained > 0)).toBe(true);
    expect(readState(state, (reader) => reader.queue())).toEqual([]);

    const outbox = readState(state, (reader) => reader.outbox());
    expect(outbox).toEqual([
      expect.objectContaining({
        runId,
        requested: "last",
        channel: "telegram",
        to: "@ops_room",
        text: "summarize the build",
        status: "delivered",
      }),
    ]);
  });

  it("logs one JSON line per request with method, hook, status, duration, request id and mapping id, to stdout and --log-file, and never the token or payload", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        { mappings: [{ id: "ping", match: { path: "ping" }, action: "wake", textTemplate: "ping {{n}}" }] },
      ),
    );
    const logFile = path.join(dir, "logs", "gateway.log");
    const gateway = await startServe(
      ["--config", config, "--state-dir", path.join(dir, "state"), "--log-file", logFile],
      { env: { HOOKS_LOG_LEVEL: "debug" } },
    );
    expect(gateway.stdout()).toContain(`  log     ${logFile}`);

    const mapped = await postJson(
      `${gateway.url}/hooks/ping`,
      { n: "secret-payload-value" },
      { ...AUTH, "x-request-id": "req-ping-1" },
    );
    expect(mapped.status).toBe(200);
    // The deprecated query token must not reach any log line either.
    const viaQuery = await postJson(`${gateway.url}/hooks/wake?token=${TOKEN}`, { text: "hi" }, {});
    expect(viaQuery.status).toBe(200);
    const denied = await postJson(
      `${gateway.url}/hooks/wake`,
      { text: "hi" },
      { authorization: "Bearer wrong" },
    );
    expect(denied.status).toBe(401);

    const line = await gateway.waitForLog((r) => r.msg === "request" && r.requestId === "req-ping-1");
    expect(line).toMatchObject({
      level: "debug",
      method: "POST",
      hook: "ping",
      status: 200,
      mappingId: "ping",
    });
    expect(typeof line.durationMs).toBe("number");
    expect(typeof line.time).toBe("string");
    await gateway.waitForLog((r) => r.msg === "request" && r.status === 401);
    const requests = gateway.logs().filter((r) => r.msg === "request");
    expect(requests.map((r) => r.status)).toEqual([200, 200, 401]);

    gateway.signal("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
    const output = gateway.stdout() + gateway.stderr();
    expect(output).not.toContain(TOKEN);
    expect(output).not.toContain("secret-payload-value");
    // The file has the same JSON lines as stdout, up to the last one.
    const fileLines = readFileSync(logFile, "utf8").trimEnd().split("\n");
    expect(fileLines.map((line) => JSON.parse(line))).toEqual(gateway.logs());
    expect(fileLines.at(-1)).toContain('"msg":"stopped"');
    expect(fileLines.join("\n")).not.toContain(TOKEN);
    expect(fileLines.join("\n")).not.toContain("secret-payload-value");
  });

  it("continues a persistent conversation under a reused session key and moves the last route with each delivery", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig());
    const state = path.join(dir, "state");
    const gateway = await startServe(["--config", config, "--state-dir", state]);

    const first = await postJson(`${gateway.url}/hooks/agent`, {
      message: "first",
      sessionKey: "hook:chat",
      sessionMode: "persistent",
      channel: "signal",
      to: "+15550001111",
    });
    expect(first.status).toBe(202);
    await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === first.body.runId);
    const second = await postJson(`${gateway.url}/hooks/agent`, {
      message: "second",
      sessionKey: "hook:chat",
      sessionMode: "persistent",
    });
    await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === second.body.runId);

    const outbox = readState(state, (reader) => reader.outbox());
    expect(outbox.map((entry) => [entry.requested, entry.channel, entry.to])).toEqual([
      ["signal", "signal", "+15550001111"],
      ["last", "signal", "+15550001111"],
    ]);
    const history = readState(state, (reader) => reader.session("hook:chat"));
    expect(history.map((entry) => [entry.role, entry.runId])).toEqual([
      ["user", first.body.runId],
      ["assistant", first.body.runId],
      ["user", second.body.runId],
      ["assistant", second.body.runId],
    ]);
    expect(history[3]!.content).toBe("second");
  });

  it("with no last route, `last` goes to whatsapp and an action without a recipient is kept as undeliverable", async () => {
    const dir = makeTempDir();
    const state = path.join(dir, "state");
    const gateway = await startServe(["--config", writeConfig(dir, baseConfig()), "--state-dir", state]);
    const agent = await postJson(`${gateway.url}/hooks/agent`, { message: "nobody to tell" });
    const warning = await gateway.waitForLog((r) => r.level === "warn" && r.runId === agent.body.runId);
    expect(String(warning.msg)).toContain("no recipient");
    expect(readState(state, (reader) => reader.outbox())).toEqual([
      expect.objectContaining({ channel: "whatsapp", status: "undeliverable", text: "nobody to tell" }),
    ]);
  });
});

describe("files that hold payloads", () => {
  /** The permission bits of a file or directory, as `ls -l` shows them in octal. */
  const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

  it("writes --capture fixtures and the --record file for their owner only: files 0600, directories it makes 0700", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig());
    const captures = path.join(dir, "captures", "today");
    const record = path.join(dir, "records", "today", "events.jsonl");
    // A record file that is already there (an earlier run's, 0644) is appended to, and made private as well.
    const earlier = path.join(dir, "earlier.jsonl");
    writeFileSync(earlier, "", { mode: 0o644 });
    const first = await startServe([
      "--config",
      config,
      "--state-dir",
      path.join(dir, "state"),
      "--capture",
      captures,
      "--record",
      record,
    ]);
    expect((await postJson(`${first.url}/hooks/wake`, { text: "a private payload" })).status).toBe(200);
    const [fixture] = await pollFor(() => {
      const files = readdirSync(captures);
      return files.length > 0 ? files : undefined;
    }, "a captured fixture");
    await pollFor(() => (readRecord(record).length > 0 ? true : undefined), "a recorded event");
    expect(readFileSync(record, "utf8")).toContain("a private payload");

    const second = await startServe([
      "--config",
      config,
      "--state-dir",
      path.join(dir, "state2"),
      "--record",
      earlier,
    ]);
    expect((await postJson(`${second.url}/hooks/wake`, { text: "another payload" })).status).toBe(200);
    await pollFor(() => (readRecord(earlier).length > 0 ? true : undefined), "a recorded event");

    expect({
      fixture: mode(path.join(captures, fixture!)),
      captures: mode(captures),
      capturesParent: mode(path.dirname(captures)),
      record: mode(record),
      records: mode(path.dirname(record)),
      recordsParent: mode(path.dirname(path.dirname(record))),
      earlier: mode(earlier),
    }).toEqual({
      fixture: "600",
      captures: "700",
      capturesParent: "700",
      record: "600",
      records: "700",
      recordsParent: "700",
      earlier: "600",
    });
  });
});

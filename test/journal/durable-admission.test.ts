/** @module The journal through the plugin over real HTTP: records on disk, restarts that finish what was left, remembered duplicates, 503 on a failed write. */

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { type JournalIo, nodeIo } from "../../src/journal/append-log.js";
import type { FileJournal } from "../../src/journal/file-journal.js";
import { testJournal } from "../helpers/file-journal.js";
import { readJournalLines } from "../helpers/journal-lines.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "journal-test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
let stateDir: string;
let host: TestHost | undefined;

beforeEach(() => {
  stateDir = mkdtempSync(path.join(tmpdir(), "hooks-state-"));
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  rmSync(stateDir, { recursive: true, force: true });
});

const journalDir = () => path.join(stateDir, "hooks-journal");

async function start(hooks: Record<string, unknown> = {}, plugin = createHooksPlugin()): Promise<TestHost> {
  host = await startTestHost(plugin, { hooks: { enabled: true, token: TOKEN, ...hooks } }, { stateDir });
  return host;
}

/** Stops the host the way a restart does: services stopped, nothing more emitted; the files stay. */
async function restart(hooks: Record<string, unknown> = {}): Promise<TestHost> {
  await host?.close();
  host = undefined;
  return start(hooks);
}

async function send(hook: string, body: unknown, headers: Record<string, string> = AUTH) {
  const response = await fetch(`${host!.url}/hooks/${hook}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const requestId = response.headers.get("x-request-id")!;
  await host!.waitForEvent("hooks:request", (event) => event.source.requestId === requestId);
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
    requestId,
  };
}

/** A journal on the state dir's default journal directory, as the plugin would open it. */
function fileJournal(io: JournalIo = nodeIo): FileJournal {
  return testJournal(journalDir(), { io });
}

function journalLines(): Array<Record<string, any>> {
  return readJournalLines(journalDir());
}

describe("the record of an accepted request", () => {
  it("holds the request without credentials, the planned events with their ids, and is marked done", async () => {
    await start();
    const sent = await send("wake", { text: "deploy finished" }, { ...AUTH, "x-github-event": "push" });
    expect(sent.status).toBe(200);
    const [event] = host!.eventsOf("session:system-event");
    await host!.close();
    host = undefined;
    const lines = journalLines();
    const admitted = lines.find((line) => line.t === "admitted")!;
    expect(admitted).toMatchObject({
      id: sent.requestId,
      hook: "wake",
      request: { method: "POST", url: "/hooks/wake", body: '{"text":"deploy finished"}' },
    });
    // Without a delivery id no duplicate will ask for the answer again: the status is kept, not the body.
    expect(admitted.response).toEqual({ status: 200 });
    expect(admitted.request.headers["x-github-event"]).toBe("push");
    expect(admitted.request.headers.authorization).toBeUndefined();
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(admitted.events[0]).toEqual({ event: "session:system-event", payload: event });
    expect(lines.some((line) => line.t === "done" && line.id === sent.requestId)).toBe(true);
  });

  it("answers and emits only after the record's fsync has completed", async () => {
    const syncs: Array<() => void> = [];
    // Each sync of the journal completes only when the test says so.
    const io: JournalIo = {
      ...nodeIo,
      fdatasync: (fd, callback) => syncs.push(() => nodeIo.fdatasync(fd, callback)),
    };
    await start({}, createHooksPlugin({ journal: fileJournal(io) }));
    let answered = false;
    const sending = send("wake", { text: "durable first" }).then((result) => {
      answered = true;
      return result;
    });
    await vi.waitUntil(() => syncs.length === 1);
    // The record is written and its sync is running: no answer and no event may have gone out yet.
    expect(answered).toBe(false);
    expect(host!.eventsOf("session:system-event")).toHaveLength(0);
    syncs.shift()!();
    expect((await sending).status).toBe(200);
    expect(host!.eventsOf("session:system-event")).toHaveLength(1);
  });

  it("is off with journal.enabled false, or on a host without a state directory: requests are still answered and their events emitted", async () => {
    await start({ journal: { enabled: false } });
    expect((await send("wake", { text: "not journaled" })).status).toBe(200);
    expect(host!.eventsOf("session:system-event").map((event) => event.text)).toEqual([
      expect.stringContaining("not journaled"),
    ]);
    await host!.close();
    expect(readdirSync(stateDir)).toEqual([]);
    host = await startTestHost(
      createHooksPlugin(),
      { hooks: { enabled: true, token: TOKEN } },
      { stateDir: false },
    );
    expect((await send("wake", { text: "nowhere to keep it" })).status).toBe(200);
    expect(host.eventsOf("session:system-event")).toHaveLength(1);
  });

  it("keeps no request body or headers with storePayloads: false", async () => {
    await start({ journal: { storePayloads: false } });
    await send("wake", { text: "private" });
    await host!.close();
    host = undefined;
    const admitted = journalLines().find((line) => line.t === "admitted")!;
    expect(admitted.request).toBeUndefined();
  });

  it("lists refusals, a stranger's too, and duplicates, with their reasons and no body", async () => {
    await start({ authFailures: { limit: 1, windowSeconds: 60 } });
    await send("wake", { text: "x" }, { ...AUTH, "idempotency-key": "k1" });
    await send("wake", { text: "x" }, { ...AUTH, "idempotency-key": "k1" });
    await send("wake", { nope: true });
    await send("wake", { text: "x" }, { authorization: "Bearer wrong", "content-type": "application/json" });
    await send("wake", { text: "x" }, { authorization: "Bearer wrong", "content-type": "application/json" });
    await host!.close();
    host = undefined;
    const answered = journalLines().filter((line) => line.t === "answered");
    // The wrong tokens (401, then 429) are listed too, within the per-address limit.
    expect(answered.map((line) => [line.status, line.code, line.reason])).toEqual([
      [200, "DUPLICATE", undefined],
      [400, "INVALID_PAYLOAD", "INVALID_PAYLOAD"],
      [401, "UNAUTHORIZED", "TOKEN_WRONG"],
      [429, "AUTH_THROTTLED", "AUTH_THROTTLED"],
    ]);
    expect(JSON.stringify(answered)).not.toContain('"x"');
  });
});

describe("a restart", () => {
  it("emits what was admitted and not emitted, with the original ids, and marks it done", async () => {
    // What a crash between the fsync and the emit leaves: a durable record and nothing else.
    const journal = fileJournal();
    await journal.open();
    const source = { hook: "wake", requestId: "req-left-behind" };
    await journal.admit({
      id: "req-left-behind",
      at: Date.now(),
      hook: "wake",
      response: { status: 200, contentType: "application/json", body: "{}" },
      events: [
        {
          event: "session:system-event",
          payload: { source, sessionKey: "main", text: "t", raw: "t", untrusted: true, eventId: "event-1" },
        },
        { event: "heartbeat:request", payload: { source, reason: "hook:wake" } },
      ],
      runs: [],
    });
    await journal.close();

    await start();
    expect(host!.eventsOf("session:system-event").map((e) => e.eventId)).toEqual(["event-1"]);
    // Heartbeat requests go once per batch, at the end of the event-loop turn.
    await vi.waitUntil(() => host!.eventsOf("heartbeat:request").length > 0);
    expect(host!.eventsOf("heartbeat:request")).toHaveLength(1);
    expect(
      host!.logs.some((line) => line.message.includes("previous run") && line.fields?.requests === 1),
    ).toBe(true);
    await restart();
    expect(host!.eventsOf("session:system-event")).toHaveLength(0);
  });

  it("reports a turn that was running as interrupted and does not run it again", async () => {
    await start();
    const sent = await send("agent", { message: "long job", name: "Builder", wakeMode: "now" });
    expect(sent.status).toBe(202);
    const [turn] = host!.eventsOf("session:agent-turn");
    // Nobody finishes the turn: the gateway goes down while it runs.
    await restart();
    expect(host!.eventsOf("session:agent-turn")).toHaveLength(0);
    const [summary] = host!.eventsOf("session:system-event");
    expect(summary).toMatchObject({
      eventId: `${turn!.runId}:summary`,
      sessionKey: "main",
      raw: "Builder (error): interrupted by a restart",
      // The name came with the request: the line stands inside the wrapper like any other summary.
      text: expect.stringMatching(
        /^SECURITY NOTICE[\s\S]*\nBuilder \(error\): interrupted by a restart\n<<<END_/,
      ),
      untrusted: true,
    });
    expect(host!.eventsOf("heartbeat:request")).toEqual([
      expect.objectContaining({ reason: `hook:${turn!.runId}` }),
    ]);
    await restart();
    expect(host!.eventsOf("session:system-event")).toHaveLength(0);
  });

  it("a finished turn is done: nothing happens at the next start", async () => {
    await start();
    await send("agent", { message: "quick job", name: "Quick" });
    const [turn] = host!.eventsOf("session:agent-turn");
    host!.bus.emit("session:agent-turn-finished", {
      source: turn!.source,
      runId: turn!.runId,
      status: "ok",
      reply: "all good",
    });
    expect(host!.eventsOf("session:system-event")[0]!.text).toContain("Quick:");
    await restart();
    expect(host!.events.filter((e) => e.event !== "hooks:request")).toEqual([]);
    const done = journalLines().find((line) => line.t === "done" && line.runs);
    expect(done?.runs).toEqual([{ runId: turn!.runId, status: "ok", reply: "text" }]);
  });

  it("remembers accepted delivery ids: a retry after the restart gets the first answer and causes nothing", async () => {
    await start();
    const headers = { ...AUTH, "idempotency-key": "order-77" };
    const first = await send("wake", { text: "once" }, headers);
    await restart();
    const again = await send("wake", { text: "once" }, headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(host!.eventsOf("session:system-event")).toHaveLength(0);
  });
});

describe("request ids and restarts of the service", () => {
  it("two requests sent with one X-Request-Id are two records, each finished on its own", async () => {
    await start();
    const headers = { ...AUTH, "x-request-id": "caller-chosen-id" };
    const first = await send("agent", { message: "one", name: "One" }, headers);
    const second = await send("wake", { text: "two" }, headers);
    expect([first.requestId, second.requestId]).toEqual(["caller-chosen-id", "caller-chosen-id"]);
    const [turn] = host!.eventsOf("session:agent-turn");
    await restart();
    // The wake was done; the turn, still running at the restart, is reported interrupted: each kept its own fate.
    expect(host!.eventsOf("session:system-event").map((e) => e.eventId)).toEqual([`${turn!.runId}:summary`]);
    const admitted = journalLines().filter((line) => line.t === "admitted");
    expect(admitted.map((line) => line.requestId)).toEqual(["caller-chosen-id", "caller-chosen-id"]);
    expect(new Set(admitted.map((line) => line.id)).size).toBe(2);
  });

  it("a service stopped and started again reads the journal afresh and serves", async () => {
    await start();
    await send("wake", { text: "before" });
    for (const service of host!.services) await service.stop();
    for (const service of host!.services) await service.start();
    expect(host!.eventsOf("session:system-event")).toHaveLength(1);
    const again = await send("wake", { text: "after" });
    expect(again.status).toBe(200);
    expect(host!.eventsOf("session:system-event")).toHaveLength(2);
  });
});

describe("a journal that cannot be written", () => {
  it("answers 503 UNAVAILABLE with Retry-After, emits nothing, keeps serving, and recovers", async () => {
    let full = false;
    const io: JournalIo = {
      ...nodeIo,
      writeSync(fd, data) {
        if (full)
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        return nodeIo.writeSync(fd, data);
      },
    };
    const journal = fileJournal(io);
    await start({}, createHooksPlugin({ journal }));
    full = true;
    const refused = await send("wake", { text: "keep me" }, { ...AUTH, "idempotency-key": "k-full" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.body.code).toBe("UNAVAILABLE");
    expect(host!.eventsOf("session:system-event")).toHaveLength(0);
    full = false;
    // The sender's retry, same delivery id: the refusal did not use it up.
    const retried = await send("wake", { text: "keep me" }, { ...AUTH, "idempotency-key": "k-full" });
    expect(retried.status).toBe(200);
    expect(host!.eventsOf("session:system-event")).toHaveLength(1);
  });
});

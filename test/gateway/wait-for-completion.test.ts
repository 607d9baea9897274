/** @module `waitForCompletion` through the real CLI and the `command` runner: ok, error, timeout, silent and heartbeat-only turns. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { startGateway as startInProcess } from "../../src/gateway/start-gateway.js";
import { cleanupCli, makeTempDir, pollFor, type Serve, startServe } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, readRecord, serveArgs, writeConfig } from "./support.js";

afterEach(cleanupCli);

/** A stand-in agent: what it answers depends on a word in the message. */
const AGENT_SCRIPT = `
import { existsSync } from "node:fs";
let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
if (input.includes("SLEEP")) setTimeout(() => {}, 60_000);
else if (input.includes("HOLD")) {
  // Holds the turn until the test lets it go (a file "go" in the config directory, the runner's cwd).
  while (!existsSync("go")) await new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write("released\\n");
}
else if (input.includes("FAIL")) { process.stderr.write("kaput\\n"); process.exit(3); }
else if (input.includes("HEARTBEAT")) process.stdout.write("**HEARTBEAT_OK**\\n");
else if (input.includes("SILENT")) process.stdout.write("NO_REPLY\\n");
else process.stdout.write("done: the build is green\\n");
`;

async function startGateway(dir: string, hooks: Record<string, unknown> = {}): Promise<Serve> {
  writeFileSync(path.join(dir, "agent.mjs"), AGENT_SCRIPT);
  const config = writeConfig(
    dir,
    baseConfig(
      { runner: { kind: "command", command: process.execPath, args: ["agent.mjs"] } },
      {
        mappings: [
          {
            id: "ci",
            match: { path: "ci" },
            messageTemplate: "CI says {{status}}",
            deliver: false,
            response: "completion",
          },
        ],
        ...hooks,
      },
    ),
  );
  return await startServe(serveArgs(dir, config).args);
}

const agent = (gateway: Serve, body: Record<string, unknown>, headers: Record<string, string> = AUTH) =>
  postJson(`${gateway.url}/hooks/agent`, { waitForCompletion: true, ...body }, headers);

describe("waitForCompletion", () => {
  it("answers 200 with each turn's outcome and OpenClaw's replyDisposition: ok (delivered), error, timeout, heartbeat-only, silent", async () => {
    const dir = makeTempDir();
    const gateway = await startGateway(dir);

    const ok = await agent(gateway, { message: "summarise", channel: "telegram", to: "12345" });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      ok: true,
      runId: expect.any(String),
      sessionKey: expect.stringMatching(/^hook:/),
      status: "ok",
      reply: "visible",
      replyDisposition: "visible",
      delivered: true,
    });
    // The reply's text stays private unless the operator exposes replies.
    expect(ok.body.replyText).toBeUndefined();
    const sent = readRecord(path.join(dir, "events.jsonl")).filter((line) => line.event === "delivery:send");
    expect(sent.map((line) => line.payload.runId)).toEqual([ok.body.runId]);

    const failed = await agent(gateway, { message: "please FAIL" });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      ok: true,
      status: "error",
      reply: "none",
      replyDisposition: "empty",
      delivered: false,
    });

    const started = performance.now();
    const slow = await agent(gateway, { message: "SLEEP", timeoutSeconds: 1 });
    expect(slow.status).toBe(200);
    expect(slow.body).toMatchObject({ ok: true, status: "timeout", reply: "none", delivered: false });
    // The runner stops the turn at its timeoutSeconds; the plugin's own deadline (5 s later) is not needed.
    expect(performance.now() - started).toBeLessThan(4_500);

    const heartbeat = await agent(gateway, { message: "HEARTBEAT check", channel: "telegram", to: "12345" });
    expect(heartbeat.body).toMatchObject({
      status: "ok",
      reply: "heartbeat-ack",
      replyDisposition: "silent",
      delivered: false,
    });

    const silent = await agent(gateway, { message: "SILENT please", channel: "telegram", to: "12345" });
    expect(silent.body).toMatchObject({
      status: "ok",
      reply: "silent",
      replyDisposition: "silent",
      delivered: false,
    });

    // Every turn still published its summary into the main session, waited for or not.
    const summaries = readRecord(path.join(dir, "events.jsonl")).filter(
      (line) => line.event === "session:system-event" && String(line.payload.eventId).endsWith(":summary"),
    );
    expect(summaries).toHaveLength(5);
  });

  it("waits on a mapping with response: completion, and only a caller-chosen flag on /agent", async () => {
    const dir = makeTempDir();
    const gateway = await startGateway(dir, { exposeReplies: true });

    const mapped = await postJson(`${gateway.url}/hooks/ci`, { status: "green" });
    expect(mapped.status).toBe(200);
    expect(mapped.body).toEqual({
      ok: true,
      runId: expect.any(String),
      sessionKey: expect.any(String),
      mappingId: "ci",
      status: "ok",
      reply: "visible",
      replyDisposition: "visible",
      delivered: false,
      replyText: "done: the build is green",
    });

    const plain = await postJson(`${gateway.url}/hooks/agent`, { message: "no waiting" });
    expect(plain.status).toBe(202);
    expect(plain.body).toEqual({ ok: true, runId: expect.any(String), sessionKey: expect.any(String) });

    const invalid = await agent(gateway, { message: "x", waitForCompletion: "yes" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/waitForCompletion must be true or false/);
  });

  it("keeps running a turn whose caller hung up, and answers a retry of the same delivery with the admission", async () => {
    const dir = makeTempDir();
    const gateway = await startGateway(dir);
    const record = path.join(dir, "events.jsonl");

    const caller = new AbortController();
    const hungUp = fetch(`${gateway.url}/hooks/agent`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "idempotency-key": "delivery-1",
        "x-request-id": "left-early",
        ...AUTH,
      },
      body: JSON.stringify({ message: "HOLD on", waitForCompletion: true, timeoutSeconds: 30 }),
      signal: caller.signal,
    });
    const turn = await pollFor(
      () =>
        readRecord(record).find(
          (line) => line.event === "session:agent-turn" && line.payload.source.requestId === "left-early",
        ),
      "the turn to be handed over",
    );
    caller.abort();
    await expect(hungUp).rejects.toThrow();
    writeFileSync(path.join(dir, "go"), "");
    const runId = turn.payload.runId;
    await gateway.waitForLog((line) => line.msg === "agent turn finished" && line.runId === runId);
    const finished = readRecord(record).find(
      (line) => line.event === "session:agent-turn-finished" && line.payload.runId === runId,
    );
    expect(finished?.payload).toMatchObject({ status: "ok", reply: "released" });
    expect(finished?.payload.source.requestId).toBe("left-early");

    // The retry does not run the turn again: it gets the first request's admission answer.
    const retry = await agent(
      gateway,
      { message: "HOLD on", timeoutSeconds: 30 },
      {
        ...AUTH,
        "idempotency-key": "delivery-1",
      },
    );
    expect(retry.status).toBe(202);
    expect(retry.headers.get("idempotent-replay")).toBe("true");
    expect(retry.body).toMatchObject({ ok: true, runId });
    const turns = readRecord(record).filter((line) => line.event === "session:agent-turn");
    expect(turns).toHaveLength(1);
  });

  it("answers a caller still waiting when the gateway stops: its turn is aborted first, then it gets status error", async () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "agent.mjs"), AGENT_SCRIPT);
    const gateway = await startInProcess({
      config: baseConfig({ runner: { kind: "command", command: process.execPath, args: ["agent.mjs"] } }),
      configDir: dir,
      port: 0,
      stateDir: path.join(dir, "state"),
      logger: silentGatewayLogger,
      stopTimeoutMs: 300,
    });
    const turnStarted = new Promise<void>((resolve) =>
      gateway.bus.once("session:agent-turn", () => resolve()),
    );
    const waiting = postJson(`${gateway.url}/hooks/agent`, {
      message: "HOLD until stopped",
      waitForCompletion: true,
    });
    await turnStarted;
    await gateway.close();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, status: "error", reply: "none", delivered: false });
  });
});

/** @module Graceful stop of `hooks serve` as a real process: SIGTERM lets in-flight requests and running turns finish, then exits 0. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, startServeProcess } from "../helpers/cli.js";
import { baseConfig, postJson, readRecord, readState, writeConfig } from "./support.js";

afterEach(cleanupCli);

/** Holds its request for a while; the line on the gateway's stdout says the request is in flight. */
const SLOW_TRANSFORM = `
export default async function slow({ payload }) {
  console.log("SLOW_TRANSFORM_STARTED");
  await new Promise((resolve) => setTimeout(resolve, 800));
  return { kind: "wake", text: "slow: " + payload.note };
}
`;

describe("graceful stop", () => {
  it("SIGTERM during an in-flight request: new connections are refused, the request still gets its 200, exit 0", async () => {
    const dir = makeTempDir();
    mkdirSync(path.join(dir, "hooks/transforms"), { recursive: true });
    writeFileSync(path.join(dir, "hooks/transforms/slow.mjs"), SLOW_TRANSFORM);
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            { id: "slow", match: { path: "slow" }, action: "wake", transform: { module: "slow.mjs" } },
          ],
        },
      ),
    );
    const state = path.join(dir, "state");
    const record = path.join(dir, "events.jsonl");
    const gateway = await startServeProcess(["--config", config, "--state-dir", state, "--record", record]);

    const inFlight = postJson(`${gateway.url}/hooks/slow`, { note: "held" });
    await gateway.waitFor(/SLOW_TRANSFORM_STARTED/);
    gateway.signal("SIGTERM");
    await gateway.waitForLog((r) => String(r.msg).startsWith("stopping"));
    await expect(fetch(`${gateway.url}/hooks/wake`, { method: "POST", body: "{}" })).rejects.toThrow();

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ok: true, mappingId: "slow" });
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    expect(gateway.logs().at(-1)).toMatchObject({ msg: "stopped" });
    // The wake's heartbeat was still pending at stop; stopping runs it, so the transcript holds the event.
    const transcript = readState(state, (reader) => reader.transcript());
    expect(
      transcript.some((entry) => entry.kind === "system-event" && entry.text.includes("slow: held")),
    ).toBe(true);
    expect(readRecord(record).map((line) => line.event)).toContain("hooks:request");
  });

  it("SIGTERM while an agent turn runs: the turn finishes with its reply before the gateway exits 0", async () => {
    const dir = makeTempDir();
    writeFileSync(
      path.join(dir, "agent.mjs"),
      'let s = ""; for await (const c of process.stdin) s += c; setTimeout(() => process.stdout.write("done after wait"), 700);',
    );
    const config = writeConfig(
      dir,
      baseConfig({ runner: { kind: "command", command: process.execPath, args: ["agent.mjs"] } }),
    );
    const state = path.join(dir, "state");
    const record = path.join(dir, "events.jsonl");
    const gateway = await startServeProcess(["--config", config, "--state-dir", state, "--record", record]);

    // The 202 is sent after the turn was handed to the session subsystem, so the turn is running now.
    const agent = await postJson(`${gateway.url}/hooks/agent`, { message: "take your time", deliver: false });
    expect(agent.status).toBe(202);
    gateway.signal("SIGTERM");
    expect(await gateway.exited).toEqual({ code: 0, signal: null });

    const stopping = gateway.logs().find((r) => String(r.msg).startsWith("stopping"));
    expect(stopping).toMatchObject({ turns: 1 });
    const finished = readRecord(record).find((line) => line.event === "session:agent-turn-finished");
    expect(finished?.payload).toMatchObject({
      runId: agent.body.runId,
      status: "ok",
      reply: "done after wait",
    });
    const transcript = readState(state, (reader) => reader.transcript());
    expect(
      transcript.some(
        (entry) => entry.kind === "system-event" && entry.eventId === `${agent.body.runId}:summary`,
      ),
    ).toBe(true);
  });
});

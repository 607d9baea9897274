/** @module The journal lists the status a caller got: a caller that waited for its agent turn got 200, not the admission's 202. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { compactSegment } from "../../src/journal/compact-segment.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { listSegments } from "../../src/journal/segments.js";
import { cleanupCli, runCli } from "../helpers/cli.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "responded-test-token-0123456789abcd";
let stateDir: string;
let host: TestHost | undefined;

beforeEach(() => {
  stateDir = mkdtempSync(path.join(tmpdir(), "hooks-responded-"));
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await cleanupCli();
  rmSync(stateDir, { recursive: true, force: true });
});

const journalDir = () => path.join(stateDir, "hooks-journal");

/** A host whose session finishes every agent turn at once, as a gateway's would. */
async function start(): Promise<TestHost> {
  host = await startTestHost(createHooksPlugin(), { hooks: { enabled: true, token: TOKEN } }, { stateDir });
  const bus = host.bus;
  bus.on("session:agent-turn", (turn) =>
    setImmediate(() =>
      bus.emit("session:agent-turn-finished", {
        source: turn.source,
        runId: turn.runId,
        status: "ok",
        reply: "done",
      }),
    ),
  );
  return host;
}

async function waitingAgent(key: string): Promise<{ status: number; requestId: string }> {
  const response = await fetch(`${host!.url}/hooks/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ message: "build the release", waitForCompletion: true }),
  });
  await response.text();
  const requestId = response.headers.get("x-request-id")!;
  await host!.waitForEvent("hooks:request", (event) => event.source.requestId === requestId);
  return { status: response.status, requestId };
}

describe("a caller that waited for its agent turn", () => {
  it("is listed with the 200 it got, also once its segment is rewritten small; a duplicate still gets the 202", async () => {
    await start();
    const waited = await waitingAgent("release-1");
    expect(waited.status).toBe(200);
    const again = await waitingAgent("release-1");
    // A duplicate gets the admission answer, as remembered with the delivery id.
    expect(again.status).toBe(202);
    await host!.close();
    host = undefined;

    const list = await runCli(["journal", "list", "--dir", journalDir()]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`  200  done +agent +${waited.requestId}$`));
    expect(lines[1]).toMatch(new RegExp(`  202  duplicate +agent +${again.requestId}$`));
    expect((await runCli(["journal", "list", "--dir", journalDir(), "--status", "200"])).stdout).toContain(
      waited.requestId,
    );
    const shown = await runCli(["journal", "show", waited.requestId, "--dir", journalDir()]);
    expect(shown.stdout).toContain("status    200 (admitted with 202;");

    for (const segment of await listSegments(journalDir())) await compactSegment(segment.file);
    const entries = await readJournal(journalDir());
    expect(entries.map(({ requestId, status }) => ({ requestId, status }))).toEqual([
      { requestId: waited.requestId, status: 200 },
      { requestId: again.requestId, status: 202 },
    ]);

    // After a restart (reading the rewritten lines), a duplicate still gets the admission answer.
    await start();
    expect((await waitingAgent("release-1")).status).toBe(202);
  });
});

/** @module What became of each planned event, on the record: a wake queued, coalesced or a duplicate; a turn's reply kind; a delivery's result; kept when the segment is compacted. */

import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { compactSegment } from "../../src/journal/compact-segment.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { listSegments } from "../../src/journal/segments.js";
import { AUTH, postJson, TOKEN } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { testJournal } from "../helpers/file-journal.js";
import { readJournalLines } from "../helpers/journal-lines.js";

let gateway: GatewayHandle | undefined;
let stateDir: string;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await cleanupCli();
});

const journalDir = () => path.join(stateDir, "hooks-journal");

async function start(): Promise<GatewayHandle> {
  gateway = await startGateway({
    config: { hooks: { enabled: true, token: TOKEN } },
    stateDir,
    port: 0,
    logger: silentGatewayLogger,
  });
  return gateway;
}

async function stop(): Promise<void> {
  await gateway!.close();
  gateway = undefined;
}

function lines(): Array<Record<string, any>> {
  return readJournalLines(journalDir());
}

function eventIdOf(requestId: string): string {
  const admitted = lines().find((line) => line.t === "admitted" && line.id === requestId)!;
  return admitted.events[0].payload.eventId;
}

function doneOf(requestId: string): Record<string, any> | undefined {
  return lines().find((line) => line.t === "done" && line.id === requestId);
}

describe("the outcomes of a request's events", () => {
  it("a wake is queued, the next one before the heartbeat coalesced, and one the gateway holds already a duplicate", async () => {
    stateDir = path.join(makeTempDir("outcomes-"), "state");
    await start();
    // Both before the heartbeat they ask for (it waits a quarter of a second to gather wakes).
    const [first, second] = await Promise.all([
      postJson(`${gateway!.url}/hooks/wake`, { text: "first" }),
      postJson(`${gateway!.url}/hooks/wake`, { text: "second", mode: "next-heartbeat" }),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    await stop();
    const ids = [first, second].map((answer) => answer.headers.get("x-request-id")!);
    const outcomes = ids.map((id) => doneOf(id)?.outcomes?.[eventIdOf(id)]).sort();
    expect(outcomes).toEqual(["coalesced", "queued"]);

    // A crash after the gateway stored the event and before the done line: the next start emits it again.
    const journal = testJournal(journalDir());
    await journal.open();
    const eventId = eventIdOf(ids[0]!);
    const source = { hook: "wake", requestId: "left-behind" };
    await journal.admit({
      id: "left-behind",
      at: Date.now(),
      hook: "wake",
      response: { status: 200 },
      events: [
        {
          event: "session:system-event",
          payload: { source, sessionKey: "main", text: "first", untrusted: true, eventId },
        },
      ],
      runs: [],
    });
    await journal.close();
    await start();
    await stop();
    expect(doneOf("left-behind")).toMatchObject({ recovered: true, outcomes: { [eventId]: "duplicate" } });
  });

  it("a turn's reply kind and its delivery's result are on the record, and survive compaction", async () => {
    stateDir = path.join(makeTempDir("outcomes-"), "state");
    const gw = await start();
    const results: string[] = [];
    const told = new Promise<void>((resolve) =>
      gw.bus.on("delivery:result", (result) => {
        results.push(result.status);
        if (results.length === 2) resolve();
      }),
    );
    const agent = (body: Record<string, unknown>) => postJson(`${gw.url}/hooks/agent`, body, AUTH);
    const sent = await agent({ message: "ship it", deliver: true, channel: "telegram", to: "12345" });
    // No recipient, and the last route is on another channel: the gateway cannot send it.
    const failed = await agent({ message: "to nobody", deliver: true, channel: "signal" });
    const silent = await agent({ message: "NO_REPLY" });
    const wake = await postJson(`${gw.url}/hooks/wake`, { text: "a wake" });
    expect([sent.status, failed.status, silent.status, wake.status]).toEqual([202, 202, 202, 200]);
    await told;
    await stop();

    const idOf = (answer: { headers: Headers }) => answer.headers.get("x-request-id")!;
    const check = async () => {
      const entries = new Map((await readJournal(journalDir())).map((entry) => [entry.id, entry]));
      const shipped = entries.get(idOf(sent))!;
      const runId = shipped.runs![0]!.runId;
      expect(shipped.runs).toEqual([{ runId, status: "ok", reply: "text" }]);
      expect(shipped.outcomes).toEqual({ [`${runId}:delivery`]: "sent" });
      const nobody = entries.get(idOf(failed))!;
      expect(nobody.outcomes?.[`${nobody.runs![0]!.runId}:delivery`]).toMatch(/^failed: no recipient/);
      expect(entries.get(idOf(silent))!.runs).toEqual([expect.objectContaining({ reply: "silent" })]);
      const woken = entries.get(idOf(wake))!;
      const eventId = woken.planned!.find((planned) => planned.event === "session:system-event")!.id;
      // Behind the turns' summaries, or ahead of them: either way it reached the queue.
      expect(woken.outcomes).toEqual({ [eventId]: expect.stringMatching(/^(queued|coalesced)$/) });
      expect(woken.planned!.map((planned) => planned.event)).toEqual([
        "session:system-event",
        "heartbeat:request",
      ]);
      return { shipped, runId };
    };
    await check();
    for (const segment of await listSegments(journalDir())) await compactSegment(segment.file);
    expect(lines().some((line) => line.t === "admitted" || line.t === "outcome")).toBe(false);
    const { shipped, runId } = await check();
    const shown = await runCli(["journal", "show", shipped.requestId, "--dir", journalDir()]);
    expect(shown.stdout).toContain(`turn      ${runId}: ok (reply: text), delivery sent`);
  });
});

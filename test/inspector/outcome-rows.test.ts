/** @module A list row says what became of an accepted request, live (observing the journal) and after a restart (read from the journal). */
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { readRecentSummaries } from "../../src/inspector/recent-summaries.js";
import { observeJournal } from "../../src/inspector/ring-records.js";
import { SummaryRing } from "../../src/inspector/summary-ring.js";
import { createNullJournal } from "../../src/journal/null-journal.js";
import { segmentFile } from "../../src/journal/segments.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

afterAll(cleanupCli);

const admitted = (id: string) => ({ id, at: 1, hook: "wake", response: { status: 200 }, events: [] });

describe("a row's outcome", () => {
  it("live: the events' outcomes at done, a turn's reply kind, a delivery told before or after the done line", async () => {
    const ring = new SummaryRing(8);
    // A journal that keeps nothing but tells its observers: only the observer's rows are looked at.
    const journal = createNullJournal();
    observeJournal(journal, ring);
    await journal.admit(admitted("wake-1"));
    expect(ring.byKey("wake-1")).toMatchObject({ state: "pending" });
    expect(ring.byKey("wake-1")?.outcome).toBeUndefined();
    journal.done("wake-1", undefined, false, { "ev-1": "coalesced" });
    expect(ring.byKey("wake-1")).toMatchObject({ state: "done", outcome: "coalesced" });

    await journal.admit(admitted("turns"));
    // The first turn's delivery is told while the second turn still runs: its record is not done yet.
    journal.outcome!("turns", { "run-1:delivery": "sent" });
    journal.done("turns", [
      { runId: "run-1", status: "ok", reply: "text" },
      { runId: "run-2", status: "ok", reply: "silent" },
    ]);
    expect(ring.byKey("turns")?.outcome).toBe("turn ok · text, turn ok · silent, delivery sent");
    journal.outcome!("turns", { "run-2:delivery": "failed: no recipient" });
    expect(ring.byKey("turns")?.outcome).toBe(
      "turn ok · text, turn ok · silent, delivery sent, delivery failed: no recipient",
    );
  });

  it("after a restart: read from the done, finished and outcome lines of the newest segments", async () => {
    const dir = makeTempDir("outcome-rows-");
    const lines = [
      { t: "admitted", ...admitted("wake-1"), events: [] },
      { t: "done", id: "wake-1", at: 2, outcomes: { "ev-1": "queued" } },
      {
        t: "finished",
        id: "agent-1",
        at: 3,
        hook: "agent",
        status: 202,
        runs: [{ runId: "run-1", status: "timeout" }],
        planned: [{ event: "session:agent-turn", id: "run-1" }],
      },
      { t: "outcome", id: "agent-1", at: 4, outcomes: { "run-1:delivery": "sent" } },
      { t: "admitted", ...admitted("pending-1"), at: 5 },
    ];
    writeFileSync(segmentFile(dir, 1), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
    const rows = await readRecentSummaries(dir, 10);
    expect(rows.map((row) => [row.id, row.state, row.outcome])).toEqual([
      ["wake-1", "done", "queued"],
      ["agent-1", "done", "turn timeout, delivery sent"],
      ["pending-1", "pending", undefined],
    ]);
  });
});

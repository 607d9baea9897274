/** @module One request's entry found in a journal of several segments, newest first, without reading the older ones. */
import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJournalInspector } from "../../src/inspector/journal-inspector.js";
import { SummaryRing } from "../../src/inspector/summary-ring.js";
import { findJournalEntry } from "../../src/journal/find-entry.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { segmentFile } from "../../src/journal/segments.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

const stored = (text: string) => ({
  method: "POST",
  url: "/hooks/wake",
  headers: { "content-type": "application/json", authorization: "[redacted]" },
  body: JSON.stringify({ text }),
});

/** Four segments, oldest first; each request's later lines are in newer segments than the one that names it. */
const SEGMENTS: object[][] = [
  [
    {
      t: "admitted",
      id: "old",
      at: 1_000,
      hook: "wake",
      response: { status: 200 },
      events: [],
      request: stored("old"),
    },
  ],
  [
    // The caller chose its X-Request-Id: the journal keys the record by its own id.
    {
      t: "admitted",
      id: "key-a",
      requestId: "caller-a",
      at: 2_000,
      hook: "wake",
      response: { status: 200 },
      events: [],
      request: stored("a"),
    },
    {
      t: "answered",
      id: "refused-1",
      at: 2_100,
      hook: "wake",
      status: 401,
      code: "UNAUTHORIZED",
      reason: "TOKEN_WRONG",
      error: "Unauthorized",
      client: "203.0.113.9",
      method: "POST",
      url: "/hooks/wake",
      headers: { authorization: "[redacted]", "user-agent": "curl/8" },
      suppressed: 4,
    },
  ],
  [
    {
      t: "finished",
      id: "c",
      at: 3_000,
      hook: "agent",
      status: 202,
      doneAt: 3_500,
      runs: [{ runId: "run-c", status: "ok", reply: "text" }],
      planned: [{ event: "session:agent-turn", id: "run-c" }],
    },
    { t: "done", id: "key-a", at: 3_100, outcomes: { "ev-a": "queued" } },
  ],
  [
    { t: "outcome", id: "c", at: 4_000, outcomes: { "run-c:delivery": "sent" } },
    { t: "responded", id: "key-a", at: 4_100, status: 200 },
  ],
];

let dir: string;

beforeAll(() => {
  dir = makeTempDir("find-entry-");
  SEGMENTS.forEach((lines, index) => {
    writeFileSync(segmentFile(dir, index + 1), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  });
});

afterAll(cleanupCli);

describe("findJournalEntry", () => {
  it("gives the entry readJournal gives, by journal key or by X-Request-Id, whatever segment holds its lines", async () => {
    const all = await readJournal(dir, { keepRecord: () => true });
    expect(all).toHaveLength(4);
    for (const entry of all) {
      expect(await findJournalEntry(dir, [entry.id])).toEqual(entry);
      expect(await findJournalEntry(dir, [entry.requestId])).toEqual(entry);
    }
    const a = await findJournalEntry(dir, ["caller-a"]);
    expect(a).toMatchObject({ id: "key-a", state: "done", outcomes: { "ev-a": "queued" } });
    expect(a?.record?.request?.body).toBe('{"text":"a"}');
    expect((await findJournalEntry(dir, ["c"]))?.outcomes).toEqual({ "run-c:delivery": "sent" });
    expect(await findJournalEntry(dir, ["nobody"])).toBeUndefined();
  });

  it("reads no segment older than the one that names the request", async () => {
    // An older segment that cannot be read at all: reading it would throw.
    const poisoned = makeTempDir("find-entry-poisoned-");
    mkdirSync(segmentFile(poisoned, 1));
    SEGMENTS.slice(1).forEach((lines, index) => {
      writeFileSync(
        segmentFile(poisoned, index + 2),
        lines.map((line) => `${JSON.stringify(line)}\n`).join(""),
      );
    });
    await expect(readJournal(poisoned)).rejects.toThrow(/EISDIR/);
    expect(await findJournalEntry(poisoned, ["caller-a"])).toMatchObject({ id: "key-a", status: 200 });
    expect(await findJournalEntry(poisoned, ["refused-1"])).toMatchObject({ reason: "TOKEN_WRONG" });

    // The inspector's detail reads the same way.
    const inspector = createJournalInspector({
      ring: new SummaryRing(8),
      journalDir: poisoned,
      live: () => undefined,
    });
    const detail = await inspector.detail("refused-1");
    expect(detail).toMatchObject({
      reason: "TOKEN_WRONG",
      client: "203.0.113.9",
      headers: { authorization: "[redacted]", "user-agent": "curl/8" },
      suppressed: 4,
      verification: "TOKEN_WRONG",
    });
    expect(detail?.explanation).toMatch(/not the hook token/);
    const turn = await inspector.detail("c");
    expect(turn).toMatchObject({
      outcome: "turn ok · text, delivery sent",
      events: [{ event: "session:agent-turn", id: "run-c" }],
      runs: [{ runId: "run-c", status: "ok", reply: "text", delivery: "sent" }],
    });
    await inspector.close();
  });
});

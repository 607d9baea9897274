/** @module What a start hands over again from the journal's files: whole events from plain segments, a count from compacted ones. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { PlannedEvent } from "../../src/events.js";
import { compactSegment } from "../../src/journal/compact-segment.js";
import { type AdmittedFields, encodeAdmitted, encodeDone } from "../../src/journal/line-format.js";
import type { SegmentState } from "../../src/journal/segments.js";
import { storedSince } from "../../src/journal/stored-since.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

afterEach(cleanupCli);

const ids = (found: { events: readonly PlannedEvent[] }) =>
  found.events.map((planned) => (planned.payload as { eventId: string }).eventId);

function wake(id: string, at: number): AdmittedFields {
  return {
    id,
    at,
    hook: "wake",
    response: { status: 200, contentType: "application/json; charset=utf-8", body: "{}" },
    events: [
      {
        event: "session:system-event",
        payload: {
          source: { hook: "wake", requestId: id },
          sessionKey: "main",
          text: `wake ${id}`,
          raw: `wake ${id}`,
          untrusted: true,
          eventId: `e-${id}`,
        },
      },
    ],
    runs: [],
  } as unknown as AdmittedFields;
}

/** A segment of `count` finished wakes, admitted from `at` on, 10 ms apart. */
function segment(dir: string, seq: number, prefix: string, at: number, count: number): SegmentState {
  const file = path.join(dir, `journal-${String(seq).padStart(8, "0")}.jsonl`);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(
      encodeAdmitted(wake(`${prefix}${i}`, at + i * 10)),
      encodeDone(`${prefix}${i}`, at + i * 10 + 2),
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  const newestAt = at + (count - 1) * 10 + 2;
  return { seq, file, openedAt: at, newestAt, holdsDeliveries: false, compacted: false, unfinished: 0 };
}

describe("storedSince", () => {
  it("since 0: every finished request's system events from plain segments, and a count of those compacted", async () => {
    const dir = makeTempDir("stored-since-");
    mkdirSync(dir, { recursive: true });
    const old = segment(dir, 1, "old", 1_000, 5);
    await compactSegment(old.file);
    const recent = segment(dir, 2, "new", 2_000, 3);
    const all = await storedSince([recent, { ...old, compacted: true }], 0);
    expect(ids(all)).toEqual(["e-new0", "e-new1", "e-new2"]);
    expect(all).toMatchObject({ requests: 3, compacted: 5 });
    // After a moment: only what finished since, and nothing of the compacted segment before it.
    const since = await storedSince([old, recent], 2_015);
    expect(ids(since)).toEqual(["e-new2"]);
    expect(since).toMatchObject({ requests: 1, compacted: 0 });
  });
});

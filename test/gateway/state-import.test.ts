/** @module The JSON-lines state files of earlier versions are imported into a new database once, torn lines skipped, then renamed. */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";
import { importLegacyState } from "../../src/gateway/state-import.js";
import { readState } from "./support.js";

const source = { hook: "wake", requestId: "r1" };
/** The old transcript file's records: a drained event and the heartbeat that drained it. */
const LEGACY_TRANSCRIPT = [
  {
    kind: "system-event",
    at: "2026-04-30T09:00:00.000Z",
    eventId: "t1",
    text: "drained",
    untrusted: true,
    source: { ...source, mappingId: "m" },
  },
  { kind: "heartbeat", at: "2026-04-30T09:00:00.250Z", reasons: ["hook:wake"], drained: 1 },
];
const lines = (...records: unknown[]) => records.map((record) => `${JSON.stringify(record)}\n`).join("");

let dir: string;
const opened: StateDb[] = [];
const infos: Array<{ message: string; fields: Record<string, unknown> | undefined }> = [];
const logger = {
  info: (message: string, fields?: Record<string, unknown>) => void infos.push({ message, fields }),
};
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-import-"));
  infos.length = 0;
});
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
  rmSync(dir, { recursive: true, force: true });
});
function open(): StateDb {
  const state = openStateDb(dir);
  opened.push(state);
  return state;
}

function writeLegacyFiles(): void {
  const queued = {
    kind: "system-event",
    at: "2026-05-01T10:00:00.000Z",
    eventId: "q1",
    text: "queued",
    untrusted: true,
    source,
  };
  // An event of a version before `kind`, then a line cut by a crash.
  const older = { at: "2026-05-01T10:00:01.000Z", eventId: "q0", text: "older", untrusted: false, source };
  writeFileSync(path.join(dir, "queue.jsonl"), `${lines(queued, older)}{"kind":"system-ev`);
  writeFileSync(path.join(dir, "transcript.jsonl"), lines(...LEGACY_TRANSCRIPT));
  const message = (sessionKey: string, i: number) => ({
    sessionKey,
    at: `2026-04-30T09:00:${String(i % 60).padStart(2, "0")}.000Z`,
    runId: `run-${i}`,
    role: i % 2 === 0 ? "user" : "assistant",
    content: `${sessionKey} ${i}`,
  });
  writeFileSync(
    path.join(dir, "sessions.jsonl"),
    `${lines(...Array.from({ length: 45 }, (_, i) => message("hook:ci", i)), message("hook:other", 0))}not json\n[1,2]\n{"sessionKey":"hook:ci","role":"user","cont`,
  );
  writeFileSync(
    path.join(dir, "outbox.jsonl"),
    lines({
      at: "2026-04-30T09:00:02.000Z",
      runId: "run-1",
      requestId: "r9",
      hook: "agent",
      requested: "last",
      channel: "telegram",
      to: "@ops_room",
      text: "reply",
      status: "delivered",
    }),
  );
  writeFileSync(
    path.join(dir, "last-route.json"),
    `${JSON.stringify({ channel: "telegram", to: "@ops_room" })}\n`,
  );
}

describe("import of the JSON-lines state files", () => {
  it("imports every file into a new database once, skipping torn lines, renames them and logs one line", async () => {
    writeLegacyFiles();
    const state = open();
    const summary = await importLegacyState(state, dir, logger);
    expect(summary).toEqual({ queue: 2, transcript: 2, messages: 46, outbox: 1, lastRoute: true });
    expect(infos).toEqual([
      { message: expect.stringContaining("imported"), fields: expect.objectContaining(summary) },
    ]);
    expect(
      readdirSync(dir)
        .filter((name) => !name.startsWith("state.sqlite"))
        .sort(),
    ).toEqual([
      "last-route.json.imported",
      "outbox.jsonl.imported",
      "queue.jsonl.imported",
      "sessions.jsonl.imported",
      "transcript.jsonl.imported",
    ]);

    const store = createSessionStore(state, undefined);
    expect(store.pending()).toEqual([
      {
        kind: "system-event",
        at: "2026-05-01T10:00:00.000Z",
        eventId: "q1",
        text: "queued",
        untrusted: true,
        source,
      },
      {
        kind: "system-event",
        at: "2026-05-01T10:00:01.000Z",
        eventId: "q0",
        text: "older",
        untrusted: false,
        source,
      },
    ]);
    expect(store.history("hook:ci")).toHaveLength(40);
    expect(store.history("hook:ci").at(-1)).toEqual({ role: "user", content: "hook:ci 44" });
    expect(store.lastRoute()).toEqual({ channel: "telegram", to: "@ops_room" });
    state.close();
    // Read back as they were written, field for field.
    expect(readState(dir, (reader) => reader.transcript())).toEqual(LEGACY_TRANSCRIPT);
    expect(readState(dir, (reader) => reader.outbox())).toEqual([
      expect.objectContaining({ runId: "run-1", channel: "telegram", to: "@ops_room", status: "delivered" }),
    ]);

    // Imported ids count as seen: the plugin re-emitting one after the upgrade is still a duplicate.
    const reopened = createSessionStore(open(), undefined);
    reopened.enqueue({ source, sessionKey: "main", text: "again", untrusted: true, eventId: "t1" });
    expect(reopened.pending().map((event) => event.eventId)).toEqual(["q1", "q0"]);
  });

  it("imports only into a database it created: files that appear later are left alone", async () => {
    const first = open();
    expect(await importLegacyState(first, dir, logger)).toBeUndefined();
    first.close();
    writeLegacyFiles();
    expect(await importLegacyState(open(), dir, logger)).toBeUndefined();
    expect(existsSync(path.join(dir, "queue.jsonl"))).toBe(true);
    expect(infos).toEqual([]);
  });
});

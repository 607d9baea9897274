/** @module The session store on a real SQLite file: queue and drain across restarts, histories read by index, the last route. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SystemEvent } from "../../src/events.js";
import { createSessionStore, HISTORY_WINDOW, SELECT_HISTORY_SQL } from "../../src/gateway/session-store.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";

const source = { hook: "wake", requestId: "r1" };
const event = (eventId: string, sessionKey = "main"): SystemEvent => ({
  source,
  sessionKey,
  text: `text ${eventId}`,
  untrusted: true,
  eventId,
});

let dir: string;
const opened: StateDb[] = [];
/** Opens the state of `dir` again, as a restarted gateway would. */
function open(): StateDb {
  const state = openStateDb(dir);
  opened.push(state);
  return state;
}
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-store-"));
});
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("session store", () => {
  it("keeps queued events across a restart and drains them once", () => {
    const first = open();
    const store = createSessionStore(first, undefined);
    store.enqueue(event("e1"));
    store.enqueue(event("e2"));
    first.close();
    const second = createSessionStore(open(), undefined);
    expect(second.pending().map((e) => e.eventId)).toEqual(["e1", "e2"]);
    expect(second.drain(["interval"])).toBe(2);
    second.enqueue(event("e3"));
    opened[1]!.close();
    const third = createSessionStore(open(), undefined);
    expect(third.pending().map((e) => e.eventId)).toEqual(["e3"]);
  });

  it("moves queued events to the transcript in order, each drain followed by its heartbeat", () => {
    const state = open();
    const store = createSessionStore(state, undefined);
    store.enqueue(event("e1"));
    store.enqueue(event("e2"));
    expect(store.drain(["hook:wake"])).toBe(2);
    expect(store.drain(["interval"])).toBe(0);
    const rows = state.db
      .prepare("SELECT kind, event_id, reasons, drained FROM transcript ORDER BY seq")
      .all();
    expect(rows).toEqual([
      { kind: "system-event", event_id: "e1", reasons: null, drained: null },
      { kind: "system-event", event_id: "e2", reasons: null, drained: null },
      { kind: "heartbeat", event_id: null, reasons: '["hook:wake"]', drained: 2 },
      { kind: "heartbeat", event_id: null, reasons: '["interval"]', drained: 0 },
    ]);
    expect(store.pending()).toEqual([]);
  });

  it("persists per-key history and the last route, which wins over the configured one", () => {
    const first = createSessionStore(open(), { channel: "telegram", to: "@ops_room" });
    first.appendHistory(
      "hook:a",
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "a" },
      ],
      "run-1",
    );
    first.setLastRoute({ channel: "signal", to: "+15550001111" });
    opened[0]!.close();
    const second = createSessionStore(open(), { channel: "telegram", to: "@ops_room" });
    expect(second.history("hook:a")).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    expect(second.history("hook:b")).toEqual([]);
    expect(second.lastRoute()).toEqual({ channel: "signal", to: "+15550001111" });
  });

  it("hands runners a key's last HISTORY_WINDOW messages, for any key, in the same turn and after a restart", () => {
    const odd = 'hook:mailbox:<a@b> "quoted" \\ ../../etc/passwd';
    const first = createSessionStore(open(), undefined);
    for (let i = 0; i < HISTORY_WINDOW + 10; i++)
      first.appendHistory("hook:long", [{ role: "user", content: `m${i}` }]);
    first.appendHistory(odd, [{ role: "user", content: "odd" }], "run-odd");
    first.appendSystemNote(event("note-1", "hook:one-shot"));
    // Not yet committed (that happens at the end of the turn): reading the key commits first.
    const long = first.history("hook:long");
    expect(long).toHaveLength(HISTORY_WINDOW);
    expect(long[0]).toEqual({ role: "user", content: "m10" });
    opened[0]!.close();

    const second = createSessionStore(open(), undefined);
    expect(second.history(odd)).toEqual([{ role: "user", content: "odd" }]);
    expect(second.history("hook:one-shot")).toEqual([{ role: "system", content: "text note-1" }]);
    expect(second.history("hook:long").at(-1)).toEqual({ role: "user", content: `m${HISTORY_WINDOW + 9}` });
    expect(second.history("hook:never")).toEqual([]);
  });

  it("reads a reused key's last 40 messages by index after 200k messages of other sessions", () => {
    const state = open();
    const store = createSessionStore(state, undefined);
    for (let i = 0; i < 50; i++) store.appendHistory("hook:reused", [{ role: "user", content: `mine ${i}` }]);
    state.flush();
    const insert = state.db.prepare(
      "INSERT INTO messages (session_key, at, run_id, role, content) VALUES (?, ?, ?, 'user', ?)",
    );
    state.db.transaction(() => {
      for (let i = 0; i < 200_000; i++) insert.run(`hook:${i}`, Date.now(), `run-${i}`, `other ${i}`);
    })();
    state.db.pragma("analysis_limit = 1000");
    state.db.exec("ANALYZE");

    const history = createSessionStore(state, undefined).history("hook:reused");
    expect(history.map((message) => message.content)).toEqual(
      Array.from({ length: HISTORY_WINDOW }, (_, i) => `mine ${i + 10}`),
    );
    // The plan, not a stopwatch: a search of the (session_key, seq) index, no scan and no sort of the table.
    const plan = state.db
      .prepare(`EXPLAIN QUERY PLAN ${SELECT_HISTORY_SQL}`)
      .all("hook:reused", HISTORY_WINDOW)
      .map((row) => (row as { detail: string }).detail);
    expect(plan).toEqual([
      expect.stringMatching(/^SEARCH messages USING INDEX messages_by_key \(session_key=\?\)/),
    ]);
  });
});

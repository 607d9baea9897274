/** @module State on disk: the database's files and modes, write errors reported (never the content) and survived, the record's writer. */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SystemEvent } from "../../src/events.js";
import { createJsonlWriter } from "../../src/gateway/jsonl-file.js";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { openStateDb, STATE_DB_FILE } from "../../src/gateway/state-db.js";
import { logWriteError } from "../../src/gateway/write-errors.js";

/** Writes to it fail with ENOSPC, as on a full disk. */
const FULL_DEVICE = "/dev/full";
const fullDeviceMissing = !existsSync(FULL_DEVICE);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-state-files-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const event = (eventId: string, text = `text ${eventId}`): SystemEvent => ({
  source: { hook: "wake", requestId: "r1" },
  sessionKey: "main",
  text,
  untrusted: true,
  eventId,
});

describe("state database file", () => {
  it("is one SQLite file in WAL mode with incremental vacuum, private to its user, in a private directory", () => {
    const stateDir = path.join(dir, "nested", "state");
    const state = openStateDb(stateDir);
    createSessionStore(state, undefined).enqueue(event("e1"));
    state.flush();
    expect(state.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(state.db.pragma("synchronous", { simple: true })).toBe(1);
    expect(state.db.pragma("auto_vacuum", { simple: true })).toBe(2);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    for (const name of [STATE_DB_FILE, `${STATE_DB_FILE}-wal`]) {
      expect(statSync(path.join(stateDir, name)).mode & 0o777).toBe(0o600);
    }
    state.close();
  });

  it("refuses a file that is not a state database of this version, and says what to do", () => {
    writeFileSync(path.join(dir, STATE_DB_FILE), "");
    const foreign = openStateDb(dir);
    foreign.db.pragma("user_version = 99");
    foreign.close();
    expect(() => openStateDb(dir)).toThrow(/not a state database of this hooks version.*move it away/);
  });
});

describe("state database on a full disk", () => {
  it("reports a failed commit with the file and the code, once, never the content, and keeps going", () => {
    const reports: Array<{ file: string; code: string | undefined; message: string }> = [];
    const state = openStateDb(dir, {
      onError: (error, file) => reports.push({ file, code: error.code, message: error.message }),
    });
    const store = createSessionStore(state, undefined);
    store.enqueue(event("e1"));
    state.flush();
    // Room for no new page: a big event cannot be written, as on a full disk.
    state.db.pragma(`max_page_count = ${state.db.pragma("page_count", { simple: true })}`);
    store.enqueue(event("e2", `SECRET-PAYLOAD ${"x".repeat(100_000)}`));
    expect(state.flush()).toBe(false);
    store.enqueue(event("e3", `SECRET-PAYLOAD ${"x".repeat(100_000)}`));
    expect(state.flush()).toBe(false);
    expect(reports).toEqual([
      { file: path.join(dir, STATE_DB_FILE), code: "SQLITE_FULL", message: expect.any(String) },
    ]);
    expect(JSON.stringify(reports)).not.toContain("SECRET-PAYLOAD");
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1"]);
    state.close();
  });

  it("keeps the queued events when the transcript cannot be written, so the next heartbeat moves them", () => {
    const codes: Array<string | undefined> = [];
    const state = openStateDb(dir, { onError: (error) => codes.push(error.code) });
    const store = createSessionStore(state, undefined);
    store.enqueue(event("e1", "y".repeat(200_000)));
    state.flush();
    const pages = state.db.pragma("page_count", { simple: true }) as number;
    state.db.pragma(`max_page_count = ${pages}`);
    expect(store.drain(["interval"])).toBe(0);
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1"]);
    expect(codes).toEqual(["SQLITE_FULL"]);
    state.db.pragma(`max_page_count = ${pages * 4}`);
    expect(store.drain(["interval"])).toBe(1);
    expect(store.pending()).toEqual([]);
    state.close();
  });

  it("keeps what it could not commit and commits it, in order, once the database has room again", async () => {
    const state = openStateDb(dir, { onError: () => undefined, retryMs: { first: 5, max: 20 } });
    const store = createSessionStore(state, undefined);
    store.enqueue(event("e1"));
    state.flush();
    const pages = state.db.pragma("page_count", { simple: true }) as number;
    state.db.pragma(`max_page_count = ${pages}`);
    store.enqueue(event("e2", "z".repeat(100_000)));
    const stored = state.committed();
    expect(state.flush()).toBe(false);
    store.enqueue(event("e3"));
    expect(state.retained).toBe(1);
    let settled = false;
    void stored.finally(() => {
      settled = true;
    });
    // Still full after a few tries: the caller is still waiting, not told "stored".
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(settled).toBe(false);
    state.db.pragma(`max_page_count = ${pages * 8}`);
    await stored;
    await state.committed();
    expect(state.retained).toBe(0);
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1", "e2", "e3"]);
    state.close();
  });

  it("gives up what it kept when the database closes still full, and says so to the waiting caller", async () => {
    const state = openStateDb(dir, { onError: () => undefined });
    const store = createSessionStore(state, undefined);
    store.enqueue(event("e1"));
    state.flush();
    state.db.pragma(`max_page_count = ${state.db.pragma("page_count", { simple: true })}`);
    store.enqueue(event("e2", "z".repeat(100_000)));
    const stored = state.committed();
    state.flush();
    state.close();
    await expect(stored).rejects.toThrow(/not committed before the gateway stopped/);
  });

  it("gives up at once a write that fails the same way on every try, and commits the writes after it", async () => {
    const codes: Array<string | undefined> = [];
    const state = openStateDb(dir, {
      onError: (error) => codes.push(error.code),
      retryMs: { first: 5, max: 20 },
    });
    const store = createSessionStore(state, undefined);
    const insertSetting = state.db.prepare("INSERT INTO settings (key, value) VALUES ('probe', 'x')");
    state.write(() => insertSetting.run());
    expect(state.flush()).toBe(true);
    // The same key again: a constraint error, which no later try can get past.
    store.enqueue(event("e1"));
    state.write(() => insertSetting.run());
    const lost = state.committed();
    expect(state.flush()).toBe(false);
    await expect(lost).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT_PRIMARYKEY" });
    expect(state.retained).toBe(0);
    // The next caller may have queued the lost writes before it asked: it is told no, once.
    await expect(state.committed()).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT_PRIMARYKEY" });
    store.enqueue(event("e2"));
    const stored = state.committed();
    expect(state.flush()).toBe(true);
    await stored;
    expect(codes).toEqual(["SQLITE_CONSTRAINT_PRIMARYKEY"]);
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e2"]);
    state.close();
  });

  it("gives up a write that fails for good among writes kept for a full disk; the others commit once there is room", async () => {
    const state = openStateDb(dir, { onError: () => undefined, retryMs: { first: 5, max: 20 } });
    const store = createSessionStore(state, undefined);
    const insertSetting = state.db.prepare("INSERT INTO settings (key, value) VALUES ('probe', 'x')");
    state.write(() => insertSetting.run());
    store.enqueue(event("e1"));
    state.flush();
    const pages = state.db.pragma("page_count", { simple: true }) as number;
    state.db.pragma(`max_page_count = ${pages}`);
    /** What a caller of committed() is told: stored, or the code of the failure. */
    const told = (commit: Promise<void>) =>
      commit.then(
        () => "stored",
        (error: { code?: string }) => error.code,
      );
    store.enqueue(event("e2", "z".repeat(100_000)));
    const full = told(state.committed());
    expect(state.flush()).toBe(false);
    state.write(() => insertSetting.run());
    const bad = told(state.committed());
    expect(state.flush()).toBe(false);
    store.enqueue(event("e3"));
    const after = told(state.committed());
    expect(state.flush()).toBe(false);
    state.db.pragma(`max_page_count = ${pages * 8}`);
    // The last is committed, but its caller asked for everything queued before it, the lost write included.
    expect(await Promise.all([full, bad, after])).toEqual([
      "stored",
      "SQLITE_CONSTRAINT_PRIMARYKEY",
      "SQLITE_CONSTRAINT_PRIMARYKEY",
    ]);
    expect(state.retained).toBe(0);
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1", "e2", "e3"]);
    state.close();
  });

  it("is logged as an error line with the file and the code", () => {
    const lines: Array<{ message: string; fields: unknown }> = [];
    const report = logWriteError({ error: (message, fields) => lines.push({ message, fields }) });
    report(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }), "/s/state.sqlite");
    expect(lines).toEqual([
      {
        message: "write failed; the gateway keeps running without what it could not write",
        fields: { file: "/s/state.sqlite", code: "SQLITE_FULL" },
      },
    ]);
  });
});

describe("the event record's JSON-lines writer", () => {
  it("writes each line before append returns", () => {
    const file = path.join(dir, "nested", "events.jsonl");
    const writer = createJsonlWriter(file);
    writer.append({ n: 1 });
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n');
    writer.append({ n: 2 });
    writer.close();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n');
  });

  it.skipIf(fullDeviceMissing)(
    "reports a failed write once with the file and the code, and does not throw",
    () => {
      const reports: Array<{ file: string; code: string | undefined }> = [];
      const writer = createJsonlWriter(FULL_DEVICE, {
        onError: (error, file) => reports.push({ file, code: error.code }),
      });
      expect(() => writer.append({ secret: "payload-text" })).not.toThrow();
      writer.append({ secret: "payload-text" });
      expect(() => writer.close()).not.toThrow();
      expect(reports).toEqual([{ file: FULL_DEVICE, code: "ENOSPC" }]);
    },
  );

  it("reports a file it cannot open (a directory in its place)", () => {
    const codes: Array<string | undefined> = [];
    const writer = createJsonlWriter(dir, { onError: (error) => codes.push(error.code) });
    writer.append({ n: 1 });
    expect(codes).toEqual(["EISDIR"]);
  });
});

/**
 * @module The state database as a view of the journal: its commits are synced about once a second, not per
 * request, and a start stores again what the journal finished after the last sync. A lost tail of the database (what
 * a power cut takes) comes back from the journal, with the same event ids; nothing is stored twice.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";
import { baseConfig, postJson, writeConfig } from "./support.js";

const WAKES = 10;
const LOST = 3;

afterEach(cleanupCli);

interface QueuedRow {
  event_id: string;
  at: number;
}

function queued(db: string): QueuedRow[] {
  const state = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return state.prepare("SELECT event_id, at FROM queue ORDER BY seq").all() as QueuedRow[];
  } finally {
    state.close();
  }
}

describe("the state database rebuilt from the journal", () => {
  it("a tail lost after the last sync comes back at start, with the same ids and nothing twice", async () => {
    const dir = makeTempDir("state-rebuilt-");
    const config = writeConfig(dir, baseConfig({ heartbeat: { everySeconds: 0 } }));
    const stateDir = path.join(dir, "state");
    const db = path.join(stateDir, "state.sqlite");
    const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
    for (let i = 0; i < WAKES; i++) {
      const answer = await postJson(`${gateway.url}/hooks/wake`, {
        text: `wake ${i}`,
        mode: "next-heartbeat",
      });
      expect(answer.status).toBe(200);
    }
    gateway.signal("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
    const before = queued(db);
    expect(before).toHaveLength(WAKES);

    // What a power cut right after these commits does: the last rows are gone, and the mark on disk is older.
    const lost = before.slice(-LOST);
    const state = new Database(db, { fileMustExist: true });
    const drop = state.prepare("DELETE FROM queue WHERE event_id = ?");
    for (const row of lost) drop.run(row.event_id);
    state.prepare("UPDATE settings SET value = ? WHERE key = 'synced_through'").run(String(lost[0]!.at));
    state.close();
    expect(queued(db)).toHaveLength(WAKES - LOST);

    const again = await startServe(["--config", config, "--state-dir", stateDir]);
    const told = await again.waitForLog((record) => /delivered again/.test(String(record.msg)));
    expect(told).toMatchObject({ again: LOST });
    // Committed at the end of the turn that queued them again.
    const ids = () => queued(db).map((row) => row.event_id);
    const all = before.map((row) => row.event_id);
    await pollFor(() => (ids().length === all.length ? true : undefined), "the lost rows queued again").catch(
      () => undefined,
    );
    expect(ids()).toEqual(all);
    again.signal("SIGTERM");
    expect((await again.exited).code).toBe(0);
  });

  it("a clean stop marks the whole state as synced: the next start has nothing to store again", async () => {
    const dir = makeTempDir("state-rebuilt-");
    const config = writeConfig(dir, baseConfig({ heartbeat: { everySeconds: 0 } }));
    const stateDir = path.join(dir, "state");
    const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
    const answer = await postJson(`${gateway.url}/hooks/wake`, { text: "one", mode: "next-heartbeat" });
    expect(answer.status).toBe(200);
    const answeredAt = Date.now();
    gateway.signal("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
    const state = new Database(path.join(stateDir, "state.sqlite"), { readonly: true, fileMustExist: true });
    const mark = state.prepare("SELECT value FROM settings WHERE key = 'synced_through'").pluck().get();
    state.close();
    expect(Number(mark)).toBeGreaterThanOrEqual(answeredAt);
    const again = await startServe(["--config", config, "--state-dir", stateDir]);
    expect(again.logs().some((record) => /delivered again/.test(String(record.msg)))).toBe(false);
    again.signal("SIGTERM");
    expect((await again.exited).code).toBe(0);
  });
});

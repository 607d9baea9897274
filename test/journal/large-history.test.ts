/**
 * @module Restart cost against history: a journal holding a large retained history of finished wakes starts serving
 * within a bound, and still finishes what was left unfinished (in its checkpoint, and after it).
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStateDb } from "../../src/gateway/state-db.js";
import { startSyncMark } from "../../src/gateway/state-sync-mark.js";
import { type AdmittedFields, encodeAdmitted, encodeDone } from "../../src/journal/line-format.js";
import { baseConfig, postJson, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";

const RECORDS = 300_000;
const PER_SEGMENT = 50_000;
/** Generous for a loaded 2-core machine; reading the whole history took 4.6 s before the checkpoint. */
const START_BOUND_MS = 2_500;

afterEach(cleanupCli);

function wakeRecord(id: string, at: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    at,
    hook: "wake",
    response: {
      status: 200,
      contentType: "application/json; charset=utf-8",
      body: `{"ok":true,"eventId":"e-${id}"}`,
    },
    events: [
      {
        event: "session:system-event",
        payload: {
          source: { hook: "wake", requestId: id },
          sessionKey: "main",
          text: `wake ${id} ${"history ".repeat(20)}`,
          raw: `wake ${id}`,
          untrusted: true,
          eventId: `e-${id}`,
        },
      },
    ],
    runs: [],
    ...extra,
  };
}

/** Segment files of finished wakes, written the way the journal writes them, and its checkpoint after them. */
function writeHistory(dir: string, now: number): number {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const segments: Array<{ seq: number; newestAt: number; holdsDeliveries: boolean }> = [];
  let fd: number | undefined;
  let chunk: string[] = [];
  const flush = () => {
    if (fd !== undefined && chunk.length > 0) writeSync(fd, chunk.join(""));
    chunk = [];
  };
  for (let i = 0; i < RECORDS; i++) {
    if (i % PER_SEGMENT === 0) {
      flush();
      if (fd !== undefined) closeSync(fd);
      const seq = segments.length + 1;
      fd = openSync(path.join(dir, `journal-${String(seq).padStart(8, "0")}.jsonl`), "w", 0o600);
      segments.push({ seq, newestAt: 0, holdsDeliveries: false });
    }
    const at = now - (RECORDS - i) * 10;
    chunk.push(`${encodeAdmitted(wakeRecord(`h${i}`, at) as unknown as AdmittedFields)}\n`);
    chunk.push(`${encodeDone(`h${i}`, at + 2)}\n`);
    segments.at(-1)!.newestAt = at + 2;
    if (chunk.length >= 2_000) flush();
  }
  flush();
  closeSync(fd!);
  const next = segments.length + 1;
  // Left unfinished in the checkpoint: admitted in the history's last hour, its done line never written.
  const unfinished = wakeRecord("left-in-checkpoint", now - 1_000);
  writeFileSync(
    path.join(dir, "checkpoint.json"),
    JSON.stringify({
      v: 1,
      seq: next,
      offset: 0,
      segments,
      unfinished: [{ seq: segments.length, handed: false, record: unfinished }],
      deliveries: [],
      stored: [],
    }),
  );
  // After the checkpoint: a record admitted and not done, as a kill -9 leaves it.
  writeFileSync(
    path.join(dir, `journal-${String(next).padStart(8, "0")}.jsonl`),
    `{"t":"admitted",${JSON.stringify(wakeRecord("left-after-checkpoint", now - 500)).slice(1)}\n`,
    { mode: 0o600 },
  );
  return RECORDS;
}

describe("a restart with a large retained history", () => {
  it(`serves within ${START_BOUND_MS} ms of CPU with ${RECORDS} finished wakes retained, and finishes what was unfinished`, async () => {
    const dir = makeTempDir("large-history-");
    const stateDir = path.join(dir, "state");
    writeHistory(path.join(stateDir, "hooks-journal"), Date.now());
    // The state database as a clean stop leaves it: its mark (the last sync) covers the whole history. Without one,
    // the start would rebuild it from the journal: the cost of a lost state, not of a restart.
    const state = openStateDb(stateDir);
    startSyncMark(state).stop();
    state.close();
    const config = writeConfig(dir, baseConfig({ heartbeat: { everySeconds: 0 } }));
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
    const startMs = performance.now() - started;
    // The gateway runs in this process: the CPU its start took is the work it did, whatever else the machine
    // runs. Wall time beside other test files and CPU-bound jobs passed the bound (3.5 to 4.4 s) with no change here.
    const { user, system } = process.cpuUsage(cpuBefore);
    const startCpuMs = (user + system) / 1_000;
    const response = await postJson(`${gateway.url}/hooks/wake`, {
      text: "after the restart",
      mode: "next-heartbeat",
    });
    expect(response.status).toBe(200);
    console.info(
      `large history: ${RECORDS} finished wakes retained, serving after ${Math.round(startMs)} ms (${Math.round(startCpuMs)} ms of CPU)`,
    );
    expect(startCpuMs).toBeLessThan(START_BOUND_MS);

    const db = new Database(path.join(stateDir, "state.sqlite"), { readonly: true, fileMustExist: true });
    try {
      const queued = () => new Set(db.prepare("SELECT event_id FROM queue").pluck().all() as string[]);
      await pollFor(
        () =>
          queued().has("e-left-in-checkpoint") && queued().has("e-left-after-checkpoint") ? true : undefined,
        "both unfinished wakes in the queue",
      );
      // Finished history is not handed over again.
      expect(queued().has("e-h0")).toBe(false);
    } finally {
      db.close();
    }
  }, 30_000);
});

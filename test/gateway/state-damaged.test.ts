/**
 * @module A damaged or emptied state database at start: garbage inside the file stops the gateway with the file named
 * and what to do, never lets it answer 200 into a state that forgets; a zero-length file, a write-ahead log deleted
 * after a kill -9 and a file moved away are rebuilt from the journal.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, truncateSync, writeSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, runCli, startServe, startServeProcess } from "../helpers/cli.js";
import { baseConfig, postJson, readState, writeConfig } from "./support.js";

const WAKES = 30;

afterEach(cleanupCli);

function gatewayDir(): { config: string; stateDir: string; db: string } {
  const dir = makeTempDir("state-damaged-");
  const config = writeConfig(dir, baseConfig({ heartbeat: { everySeconds: 0 } }));
  const stateDir = path.join(dir, "state");
  return { config, stateDir, db: path.join(stateDir, "state.sqlite") };
}

async function sendWakes(url: string, prefix: string, count = WAKES): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await postJson(`${url}/hooks/wake`, { text: `${prefix} ${i}`, mode: "next-heartbeat" });
    expect(response.status).toBe(200);
  }
}

/** A gateway that served WAKES wakes and stopped cleanly. */
async function servedAndStopped(config: string, stateDir: string): Promise<void> {
  const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
  await sendWakes(gateway.url, "before");
  gateway.signal("SIGTERM");
  expect((await gateway.exited).code).toBe(0);
}

/** Every wake sent with `prefix` is queued: committed at the end of the turn that queued it, so polled for. */
async function expectQueued(stateDir: string, prefix: string): Promise<void> {
  const missing = () => {
    const queued = readState(stateDir, (reader) => reader.queue().map((entry) => entry.text));
    return [...Array(WAKES).keys()].filter((i) => !queued.some((text) => text.includes(`${prefix} ${i}`)));
  };
  await pollFor(() => (missing().length === 0 ? true : undefined), `all ${prefix} wakes queued`).catch(() =>
    expect(missing()).toEqual([]),
  );
}

/** `hooks serve` on the directory: it must exit with an error naming the file, never reach "listening". */
async function expectRefused(config: string, stateDir: string, db: string, reason: RegExp): Promise<void> {
  const run = await runCli(["serve", "--port", "0", "--config", config, "--state-dir", stateDir]);
  expect(run.stdout).not.toMatch(/listening on/);
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain(db);
  expect(run.stderr).toMatch(reason);
  expect(run.stderr).toMatch(/restore it from a backup, or move state\.sqlite/i);
}

describe("a state database damaged while the gateway was down", () => {
  it("8 KiB of garbage inside the file: refused at start, the file named", async () => {
    const { config, stateDir, db } = gatewayDir();
    await servedAndStopped(config, stateDir);
    // Over table pages, past the header: SQLite opens such a file and fails only when it reads them.
    const fd = openSync(db, "r+");
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, 16_384);
    closeSync(fd);
    await expectRefused(config, stateDir, db, /is damaged/);
  });

  it("a zero-length file: rebuilt from the journal, every wake queued again, a warning naming the file", async () => {
    const { config, stateDir, db } = gatewayDir();
    await servedAndStopped(config, stateDir);
    truncateSync(db, 0);
    const again = await startServe(["--config", config, "--state-dir", stateDir]);
    const told = await again.waitForLog((record) => /rebuilt from the journal/.test(String(record.msg)));
    expect(told).toMatchObject({ level: "warn", events: WAKES, again: WAKES });
    expect(String(told.msg)).toContain(db);
    await expectQueued(stateDir, "before");
    again.signal("SIGTERM");
    expect((await again.exited).code).toBe(0);
  });

  it("the write-ahead log deleted after a kill -9: the acknowledged wakes it held are stored again from the journal", async () => {
    const { config, stateDir, db } = gatewayDir();
    const gateway = await startServeProcess(["--config", config, "--state-dir", stateDir]);
    await sendWakes(gateway.url, "acknowledged");
    gateway.signal("SIGKILL");
    await gateway.exited;
    expect(existsSync(`${db}-wal`)).toBe(true);
    rmSync(`${db}-wal`);
    // The file keeps the moment its last sync covered; what the journal finished after it is handed over again.
    const again = await startServe(["--config", config, "--state-dir", stateDir]);
    const told = await again.waitForLog((record) => /delivered again/.test(String(record.msg)));
    // The last wakes may not have had their `done` line yet: those the start finishes as unfinished, by id too.
    expect(told.again).toBeGreaterThan(WAKES / 2);
    await expectQueued(stateDir, "acknowledged");
    again.signal("SIGTERM");
    expect((await again.exited).code).toBe(0);
  });

  it.each([0, 1])(
    "a file moved away is rebuilt from the journal, and after %i wakes starts again: the old file's events are not asked of the new one",
    async (wakes) => {
      const { config, stateDir, db } = gatewayDir();
      await servedAndStopped(config, stateDir);
      renameSync(db, `${db}.old`);
      rmSync(`${db}-wal`, { force: true });
      rmSync(`${db}-shm`, { force: true });
      const fresh = await startServe(["--config", config, "--state-dir", stateDir]);
      await expectQueued(stateDir, "before");
      await sendWakes(fresh.url, "fresh", wakes);
      fresh.signal("SIGTERM");
      expect((await fresh.exited).code).toBe(0);
      const again = await startServe(["--config", config, "--state-dir", stateDir]);
      await sendWakes(again.url, "again", 1);
      again.signal("SIGTERM");
      expect((await again.exited).code).toBe(0);
    },
  );
});

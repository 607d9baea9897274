/** @module Unit tests of the delivery state file (round trip, atomic replacement, refusing a damaged file) and its lock. */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomically } from "../../src/mailbox/atomic-write.js";
import { createDeliveryStateStore, STATE_FILE_NAME } from "../../src/mailbox/delivery-state.js";
import { acquireStateLock, LOCK_FILE_NAME } from "../../src/mailbox/state-lock.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "hooks-state-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fields = { account: "me@imap.example.org:993/INBOX", uidValidity: 1700000000, lastUid: 41 };

describe("delivery state store", () => {
  it("has no state before the first save", async () => {
    expect(await createDeliveryStateStore(dir).load()).toBeUndefined();
  });

  it("reads back what it saved, in a private file, creating the directory", async () => {
    const store = createDeliveryStateStore(path.join(dir, "nested", "state"));
    const saved = await store.save(fields);
    expect(saved).toMatchObject({ version: 1, ...fields });
    expect(await store.load()).toEqual(saved);
    expect(store.file).toBe(path.join(dir, "nested", "state", STATE_FILE_NAME));
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
  });

  it("replaces the file on every save and leaves no temp file behind", async () => {
    const store = createDeliveryStateStore(dir);
    for (let uid = 1; uid <= 20; uid++) await store.save({ ...fields, lastUid: uid });
    expect((await store.load())?.lastUid).toBe(20);
    expect(await readdir(dir)).toEqual([STATE_FILE_NAME]);
  });

  it("refuses a damaged file instead of guessing a position", async () => {
    const store = createDeliveryStateStore(dir);
    await writeFile(store.file, "{ not json");
    await expect(store.load()).rejects.toThrow(/not valid JSON.*move it away/);
    await writeFile(store.file, JSON.stringify({ version: 1, account: "x", uidValidity: 0, lastUid: -1 }));
    await expect(store.load()).rejects.toThrow(/not a mailbox state/);
  });
});

describe("writeFileAtomically", () => {
  it("keeps the requested mode whatever the umask", async () => {
    const file = path.join(dir, "config.json5");
    await writeFileAtomically(file, "{}\n", 0o640);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await readFile(file, "utf8")).toBe("{}\n");
  });

  it("removes its temp file when the final rename fails", async () => {
    // A directory where the file should go makes rename() fail after the temp file was fully written.
    const target = path.join(dir, "target");
    await mkdir(target);
    await expect(writeFileAtomically(target, "new")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["target"]);
  });
});

describe("acquireStateLock", () => {
  it("lets one helper in per state directory and frees the directory on release", async () => {
    const lock = await acquireStateLock(path.join(dir, "state"));
    await expect(acquireStateLock(path.join(dir, "state"), process.pid + 1)).rejects.toThrow(
      new RegExp(`pid ${process.pid}\\) already uses`),
    );
    await lock.release();
    const again = await acquireStateLock(path.join(dir, "state"), process.pid + 1);
    expect(await readFile(again.file, "utf8")).toBe(`${process.pid + 1}\n`);
  });

  it("takes over the lock of a process that no longer exists", async () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    await writeFile(path.join(dir, LOCK_FILE_NAME), `${dead}\n`);
    const lock = await acquireStateLock(dir);
    expect(await readFile(lock.file, "utf8")).toBe(`${process.pid}\n`);
  });
});

/**
 * @module A full disk, for real: the gateway's state directory on a tiny tmpfs, filled up. Requests get 503 with
 * Retry-After and cause nothing; once space is freed, the same gateway accepts again, and what it acknowledged while
 * only its database's disk was full reaches the session then. Needs root (mount); CI runs as root, and there a
 * missing mount is a failure, not a skip.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, writeConfig } from "./support.js";

/** Mounts a tmpfs of `size` at `dir`; false when this process may not mount (not root, no capability). */
function mountTmpfs(dir: string, size: string): boolean {
  const result = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], {
    encoding: "utf8",
  });
  return result.status === 0;
}

const mounted: string[] = [];
afterEach(async () => {
  // Lazily, first: a gateway still running keeps the mount busy, and the temp dir can only go once it is detached.
  for (const dir of mounted.splice(0)) spawnSync("umount", ["-l", dir]);
  await cleanupCli();
});

/** Writes zeros until the file system refuses: what a full disk looks like to the gateway. */
function fill(file: string): void {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(16 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

// Outside CI, a user who may not mount skips it; under CI it runs, and a refused mount fails it.
const canMount = process.getuid?.() === 0 || Boolean(process.env.CI);

describe.runIf(canMount)("the state directory's disk fills up", () => {
  it("answers 503 UNAVAILABLE with Retry-After, emits nothing, and accepts again once there is space", async () => {
    const dir = makeTempDir("disk-full-");
    const stateDir = path.join(dir, "state");
    mkdirSync(stateDir);
    expect(mountTmpfs(stateDir, "2m")).toBe(true);
    mounted.push(stateDir);
    const config = writeConfig(dir, baseConfig({ heartbeat: { everySeconds: 0 } }));
    const record = path.join(dir, "events.jsonl");
    const gateway = await startServe(["--config", config, "--state-dir", stateDir, "--record", record], {
      env: { HOOKS_LOG_LEVEL: "debug" },
    });
    // Each record is larger than a memory page: it cannot slip into the slack at the end of a file's last page.
    const wake = (key: string) =>
      postJson(
        `${gateway.url}/hooks/wake`,
        { text: `${key} ${"x".repeat(9000)}`, mode: "next-heartbeat" },
        { ...AUTH, "idempotency-key": key },
      );
    expect((await wake("before")).status).toBe(200);

    const filler = path.join(stateDir, "filler");
    fill(filler);
    const refused = await wake("while full");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.body).toMatchObject({ ok: false, code: "UNAVAILABLE" });
    const eventsWhileFull = readFileSync(record, "utf8");
    expect(eventsWhileFull).not.toContain("while full");

    rmSync(filler);
    // The sender's retry, same delivery id: accepted now, and only now.
    const retried = await wake("while full");
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replay")).toBeNull();
    await gateway.waitForLog(
      (line) =>
        line.msg === "request" &&
        line.status === 200 &&
        line.requestId === retried.headers.get("x-request-id"),
    );
    const systemEvents = readFileSync(record, "utf8")
      .split("\n")
      .filter((line) => line.includes('"session:system-event"'));
    expect(systemEvents.filter((line) => line.includes("while full"))).toHaveLength(1);
    expect(gateway.stdout()).toContain("ENOSPC");

    gateway.signal("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
  });

  it("stores every wake it acknowledged while its database could not be written once space returns, without a restart", async () => {
    const dir = makeTempDir("disk-full-state-");
    const stateDir = path.join(dir, "state");
    mkdirSync(stateDir);
    expect(mountTmpfs(stateDir, "2m")).toBe(true);
    mounted.push(stateDir);
    // The journal has room (another disk): requests are acknowledged while the database's disk is full.
    const journalDir = path.join(dir, "journal");
    const config = writeConfig(
      dir,
      baseConfig({ heartbeat: { everySeconds: 0 } }, { journal: { dir: journalDir } }),
    );
    const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
    const wake = async (text: string) => {
      const response = await postJson(`${gateway.url}/hooks/wake`, {
        text: `${text} ${"x".repeat(9000)}`,
        mode: "next-heartbeat",
      });
      expect(response.status).toBe(200);
      return response.body.eventId as string;
    };
    await wake("before");
    const filler = path.join(stateDir, "filler");
    fill(filler);
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) acknowledged.push(await wake(`while full ${i}`));
    await gateway.waitForLog((line) => line.code === "SQLITE_FULL");

    const db = new Database(path.join(stateDir, "state.sqlite"), { readonly: true, fileMustExist: true });
    try {
      const queued = () => new Set(db.prepare("SELECT event_id FROM queue").pluck().all() as string[]);
      expect(acknowledged.filter((id) => queued().has(id))).toEqual([]);
      rmSync(filler);
      // The same gateway, no restart: the kept writes commit once the disk has room again.
      await pollFor(
        () => (acknowledged.every((id) => queued().has(id)) ? true : undefined),
        "every acknowledged wake in the session's queue",
        10_000,
      );
    } finally {
      db.close();
    }
    gateway.signal("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
  });
});

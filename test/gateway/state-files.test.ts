/** @module State files on a failing disk: the JSON-lines writer reports write errors and the gateway keeps serving. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createJsonlWriter } from "../../src/gateway/jsonl-file.js";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/spawn-cli.js";
import { AUTH, baseConfig, postJson, writeConfig } from "./support.js";

/** Writes to it fail with ENOSPC, as on a full disk. */
const FULL_DEVICE = "/dev/full";
const fullDeviceMissing = !existsSync(FULL_DEVICE);

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-state-files-"));
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupCli();
});

describe("JSON-lines writer", () => {
  it("writes the lines of one turn together at the end of the turn, and what is pending on close", async () => {
    const file = path.join(dir, "nested", "log.jsonl");
    const writer = createJsonlWriter(file);
    writer.append({ n: 1 });
    writer.append({ n: 2 });
    expect(existsSync(file)).toBe(false);
    await nextTurn();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n');
    writer.append({ n: 3 });
    writer.close();
    expect(readFileSync(file, "utf8")).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  it.skipIf(fullDeviceMissing)(
    "reports a failed write with the file and the error code, once, and does not throw",
    async () => {
      const reports: Array<{ file: string; code: string | undefined; message: string }> = [];
      const writer = createJsonlWriter(FULL_DEVICE, {
        onError: (error, file) => reports.push({ file, code: error.code, message: error.message }),
      });
      writer.append({ secret: "payload-text" });
      await nextTurn();
      writer.append({ secret: "payload-text" });
      expect(writer.flush()).toBe(false);
      expect(writer.appendBytes(Buffer.from('{"x":1}\n'))).toBe(false);
      expect(() => writer.close()).not.toThrow();
      // Said once for as long as the disk stays full, not once per turn.
      expect(reports).toEqual([{ file: FULL_DEVICE, code: "ENOSPC", message: expect.any(String) }]);
      expect(JSON.stringify(reports)).not.toContain("payload-text");
    },
  );

  it.skipIf(fullDeviceMissing)("a line-by-line writer (the event record) survives a failing file too", () => {
    const codes: Array<string | undefined> = [];
    const writer = createJsonlWriter(FULL_DEVICE, {
      flush: "line",
      onError: (error) => codes.push(error.code),
    });
    expect(() => writer.append({ event: "hooks:request" })).not.toThrow();
    writer.close();
    expect(codes).toEqual(["ENOSPC"]);
  });

  it("reports a file it cannot open (a directory in its place)", async () => {
    const codes: Array<string | undefined> = [];
    const writer = createJsonlWriter(dir, { onError: (error) => codes.push(error.code) });
    writer.append({ n: 1 });
    await nextTurn();
    expect(codes).toEqual(["EISDIR"]);
  });
});

describe.skipIf(fullDeviceMissing)("session store on a full disk", () => {
  const event = (eventId: string) => ({
    source: { hook: "wake", requestId: "r1" },
    sessionKey: "main",
    text: `text ${eventId}`,
    untrusted: true,
    eventId,
  });

  it("keeps the queued events when the transcript cannot be written, so the next heartbeat moves them", () => {
    symlinkSync(FULL_DEVICE, path.join(dir, "transcript.jsonl"));
    const files: string[] = [];
    const store = createSessionStore(dir, undefined, { onError: (_error, file) => files.push(file) });
    store.enqueue(event("e1"));
    expect(store.drain(["interval"])).toBe(0);
    expect(store.pending().map((queued) => queued.eventId)).toEqual(["e1"]);
    expect(readFileSync(path.join(dir, "queue.jsonl"), "utf8")).toContain('"eventId":"e1"');
    expect(files).toEqual([path.join(dir, "transcript.jsonl")]);
    store.close();
  });

  it("moves the last route in memory when its file cannot be written, and says so", () => {
    const files: string[] = [];
    const store = createSessionStore(path.join(dir, "state"), undefined, {
      onError: (_error, file) => files.push(file),
    });
    // A device where the state directory should be: nothing can be created below it.
    symlinkSync(FULL_DEVICE, path.join(dir, "state"));
    store.setLastRoute({ channel: "telegram", to: "@ops_room" });
    expect(store.lastRoute()).toEqual({ channel: "telegram", to: "@ops_room" });
    expect(files).toEqual([path.join(dir, "state", "last-route.json")]);
    store.close();
  });
});

describe.skipIf(fullDeviceMissing)("hooks serve with a full disk under its state files", () => {
  it("logs an error naming the file and code, never the content, and keeps answering hooks", async () => {
    const work = makeTempDir();
    const state = path.join(work, "state");
    // Written, never read back: outbox and transcript can point at a full device without the store reading it.
    mkdirSync(state);
    symlinkSync(FULL_DEVICE, path.join(state, "outbox.jsonl"));
    symlinkSync(FULL_DEVICE, path.join(state, "transcript.jsonl"));
    const config = writeConfig(
      work,
      baseConfig({
        heartbeat: { everySeconds: 0 },
        session: { lastRoute: { channel: "telegram", to: "@ops_room" } },
      }),
    );
    const gateway = await startServe(["--config", config, "--state-dir", state]);

    const agent = await postJson(`${gateway.url}/hooks/agent`, {
      message: "SECRET-PAYLOAD one",
      channel: "last",
    });
    expect(agent.status).toBe(202);
    const wake = await postJson(`${gateway.url}/hooks/wake`, { text: "SECRET-PAYLOAD two" });
    expect(wake.status).toBe(200);
    const output = () => gateway.stdout() + gateway.stderr();
    await pollFor(
      () => (output().includes("outbox.jsonl") && output().includes("transcript.jsonl") ? true : undefined),
      "the outbox and transcript write errors to be reported",
    );
    expect(output()).toContain("ENOSPC");
    expect(output()).not.toContain("SECRET-PAYLOAD");

    // Still serving, and still alive.
    const again = await postJson(`${gateway.url}/hooks/wake`, { text: "after the errors" }, AUTH);
    expect(again.status).toBe(200);
    expect(gateway.child.exitCode).toBeNull();
  });
});

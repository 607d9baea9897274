/** @module The journal's checkpoint file on its own: written in the background, read back whole, a failed write reported once. */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostLogger } from "../../src/host/contract.js";
import { type Checkpoint, CheckpointWriter, readCheckpoint } from "../../src/journal/checkpoint.js";

let dir: string;
const warnings: string[] = [];
const logger: HostLogger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} };

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "checkpoint-"));
  warnings.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function checkpoint(ids: number): Checkpoint {
  return {
    v: 1,
    seq: 3,
    offset: 120,
    segments: [{ seq: 2, newestAt: 5, holdsDeliveries: true, compacted: true }],
    unfinished: [],
    deliveries: Array.from({ length: ids }, (_, i) => ({
      key: `delivery:github:${i}`,
      response: { status: 200, contentType: "application/json", body: `{"ok":true,"n":${i}}` },
      at: i,
    })),
    stored: [[{ eventId: "e", sessionKey: "main", at: 4 }]],
  };
}

describe("the checkpoint file", () => {
  it.each([0, 1, 12_345])("with %i delivery ids reads back equal", async (ids) => {
    const writer = new CheckpointWriter(dir, logger);
    const written = checkpoint(ids);
    writer.write("a", () => written);
    await writer.settled();
    expect(await readCheckpoint(dir)).toEqual(written);
    expect(readdirSync(dir)).toEqual(["checkpoint.json"]);
    expect(writer.writtenSeq).toBe(3);
  });

  it("a write that fails keeps the previous one, is reported once, and is tried again at the same point", async () => {
    const writer = new CheckpointWriter(dir, logger);
    writer.write("a", () => checkpoint(1));
    await writer.settled();
    // A directory where the temporary file goes: the write fails as a full disk would, after the old file is kept.
    mkdirSync(path.join(dir, "checkpoint.json.tmp"));
    writer.write("b", () => checkpoint(2));
    writer.write("c", () => checkpoint(3));
    await writer.settled();
    expect(warnings).toHaveLength(1);
    expect((await readCheckpoint(dir))?.deliveries).toHaveLength(1);
    rmSync(path.join(dir, "checkpoint.json.tmp"), { recursive: true });
    writer.write("c", () => checkpoint(3));
    await writer.settled();
    expect((await readCheckpoint(dir))?.deliveries).toHaveLength(3);
  });
});

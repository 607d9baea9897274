/** @module The duplicates stage when the store fails to record a first answer: retried in the background, counted, logged. */
import { describe, expect, it } from "vitest";
import type { HostLogger } from "../../src/host/contract.js";
import { NO_METRICS } from "../../src/metrics/metrics.js";
import { checkDuplicate } from "../../src/pipeline/stages/dedupe.js";
import { MemoryStore } from "../../src/store/memory.js";
import type { StoredResponse } from "../../src/store/store.js";
import { pollFor } from "../helpers/cli.js";

const ANSWER = {
  status: 202,
  headers: { "Content-Type": "application/json; charset=utf-8" },
  body: '{"ok":true}',
};

describe("a first answer the store fails to record", () => {
  it("is retried until it is recorded, while the sender's answer does not wait; each failure counted", async () => {
    const memory = new MemoryStore();
    let failuresLeft = 2;
    const settles: Array<StoredResponse | undefined> = [];
    const store = Object.assign(Object.create(memory) as MemoryStore, {
      async settleDelivery(key: string, claim: string, response: StoredResponse | undefined, keepMs: number) {
        settles.push(response);
        if (failuresLeft-- > 0) throw new Error("Command timed out");
        await memory.settleDelivery(key, claim, response, keepMs);
      },
    });
    const lines: string[] = [];
    const logger: HostLogger = {
      debug() {},
      info: (message) => void lines.push(`info ${message}`),
      warn() {},
      error: (message) => void lines.push(`error ${message}`),
    };
    const failures: string[] = [];
    const deps = {
      store,
      keepMs: 60_000,
      logger,
      metrics: { ...NO_METRICS, storeFailure: (operation: string) => void failures.push(operation) },
    };
    const verdict = await checkDuplicate(deps, "wake", "delivery-1");
    if (verdict.kind !== "first") throw new Error("expected first");
    await verdict.ticket.settle(ANSWER);
    // The first attempt failed and settle() returned: the answer goes out now, the retries follow.
    expect(settles).toHaveLength(1);
    expect(lines).toEqual([
      expect.stringMatching(/^error recording a delivery's answer failed: Command timed out; retrying/),
    ]);
    await pollFor(() => (settles.length === 3 ? true : undefined), "two retries", 5_000);
    await pollFor(() => (lines.length === 2 ? true : undefined), "the recovery line");
    expect(lines[1]).toMatch(/^info a delivery's answer was recorded after all/);
    expect(failures).toEqual(["settle", "settle"]);
    const copy = await checkDuplicate(deps, "wake", "delivery-1");
    expect(copy).toEqual({
      kind: "duplicate",
      response: { status: 202, contentType: "application/json; charset=utf-8", body: '{"ok":true}' },
      key: "delivery:wake:delivery-1",
    });
  });
});

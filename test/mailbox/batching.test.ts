/** @module Unit tests of batching, the 413 split, hook retries with backoff, and the watcher's wake latch. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBackoff } from "../../src/mailbox/backoff.js";
import { chunk, deliverBatch, type PendingMessage } from "../../src/mailbox/batch-delivery.js";
import { createRetryingSender, type PostResult, type SendOutcome } from "../../src/mailbox/hook-poster.js";
import type { MailboxLogger } from "../../src/mailbox/logger.js";
import type { MailboxMessage } from "../../src/mailbox/message-extract.js";
import { createWakeLatch } from "../../src/mailbox/wake-latch.js";

const pending = (uids: number[]): PendingMessage[] =>
  uids.map((uid) => ({ uid, message: { id: `7-${uid}`, from: "a@b", subject: "s", snippet: "x" } }));

function recordingLogger(): MailboxLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
}

describe("chunk", () => {
  it("splits into parts of at most `size`, in order, losing nothing", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer({ min: 1, max: 30 }), (items, size) => {
        const parts = chunk(items, size);
        expect(parts.flat()).toEqual(items);
        expect(parts.every((part) => part.length >= 1 && part.length <= size)).toBe(true);
        expect(parts.slice(0, -1).every((part) => part.length === size)).toBe(true);
      }),
    );
  });

  it("rejects a size that would never end", () => {
    expect(() => chunk([1], 0)).toThrow(/positive integer/);
  });
});

describe("deliverBatch", () => {
  it("sends one POST and records the highest UID after a 2xx", async () => {
    const sent: string[][] = [];
    const commits: number[] = [];
    const outcome = await deliverBatch(
      pending([3, 4, 9]),
      async (messages) => {
        sent.push(messages.map((m) => m.id));
        return { kind: "delivered" };
      },
      async (uid) => {
        commits.push(uid);
      },
    );
    expect(outcome).toEqual({ kind: "delivered" });
    expect(sent).toEqual([["7-3", "7-4", "7-9"]]);
    expect(commits).toEqual([9]);
  });

  it("halves a batch the hook finds too large (413) until the parts fit, committing each in order", async () => {
    const accepted: string[] = [];
    const commits: number[] = [];
    const send = async (messages: MailboxMessage[]): Promise<SendOutcome> => {
      if (messages.length > 2) return { kind: "rejected", status: 413, reason: "HTTP 413" };
      accepted.push(...messages.map((m) => m.id));
      return { kind: "delivered" };
    };
    const outcome = await deliverBatch(pending([1, 2, 3, 4, 5, 6, 7]), send, async (uid) => {
      commits.push(uid);
    });
    expect(outcome.kind).toBe("delivered");
    expect(accepted).toEqual(["7-1", "7-2", "7-3", "7-4", "7-5", "7-6", "7-7"]);
    expect(commits).toEqual([...commits].sort((a, b) => a - b));
    expect(commits.at(-1)).toBe(7);
  });

  it("reports a single message that is still too large, after committing the parts before it", async () => {
    const commits: number[] = [];
    const send = async (messages: MailboxMessage[]): Promise<SendOutcome> =>
      messages.some((m) => m.id === "7-3")
        ? { kind: "rejected", status: 413, reason: "HTTP 413 PAYLOAD_TOO_LARGE" }
        : { kind: "delivered" };
    const outcome = await deliverBatch(pending([1, 2, 3, 4]), send, async (uid) => {
      commits.push(uid);
    });
    expect(outcome).toEqual({
      kind: "rejected",
      status: 413,
      reason: "HTTP 413 PAYLOAD_TOO_LARGE",
      ids: ["7-3"],
    });
    expect(commits).toEqual([2]);
  });

  it("commits nothing when the hook refuses for another reason or the helper stops", async () => {
    const commits: number[] = [];
    const commit = async (uid: number) => {
      commits.push(uid);
    };
    const refused = await deliverBatch(
      pending([1, 2]),
      async () => ({ kind: "rejected", status: 401, reason: "HTTP 401" }),
      commit,
    );
    expect(refused).toMatchObject({ kind: "rejected", status: 401, ids: ["7-1", "7-2"] });
    expect(await deliverBatch(pending([1]), async () => ({ kind: "stopped" }), commit)).toEqual({
      kind: "stopped",
    });
    expect(commits).toEqual([]);
  });
});

describe("createBackoff", () => {
  it("doubles from the first delay up to the cap, and starts over after reset", () => {
    const backoff = createBackoff({ initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 });
    expect(Array.from({ length: 6 }, () => backoff.next())).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoff.attempts).toBe(6);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it("keeps jittered delays within the spread and under the cap", () => {
    const low = createBackoff({ initialMs: 1_000, maxMs: 1_500, factor: 2, jitter: 0.2 }, () => 0);
    const high = createBackoff({ initialMs: 1_000, maxMs: 1_500, factor: 2, jitter: 0.2 }, () => 1);
    expect([low.next(), low.next()]).toEqual([800, 1_200]);
    expect([high.next(), high.next()]).toEqual([1_200, 1_500]);
  });
});

describe("createRetryingSender", () => {
  const fastBackoff = () => createBackoff({ initialMs: 1, maxMs: 5, factor: 2, jitter: 0 });
  const one: MailboxMessage[] = [
    { id: "7-1", from: "secret sender", subject: "secret subject", snippet: "s" },
  ];

  function scripted(results: PostResult[]) {
    let calls = 0;
    return {
      post: async () => {
        const result = results[Math.min(calls, results.length - 1)];
        calls += 1;
        if (result === undefined) throw new Error("no scripted result");
        return result;
      },
      calls: () => calls,
    };
  }

  it("retries network errors and 5xx until a 2xx, logging ids but never content", async () => {
    const script = scripted([
      { kind: "transient", reason: "network error ECONNREFUSED" },
      { kind: "transient", reason: "HTTP 503" },
      { kind: "delivered", status: 202 },
    ]);
    const logger = recordingLogger();
    const send = createRetryingSender({
      post: script.post,
      backoff: fastBackoff(),
      maxDelayMs: 5,
      logger,
      signal: new AbortController().signal,
    });
    expect(await send(one)).toEqual({ kind: "delivered" });
    expect(script.calls()).toBe(3);
    expect(logger.lines.filter((line) => line.includes("retry"))).toHaveLength(2);
    expect(logger.lines.join("\n")).toContain("7-1");
    expect(logger.lines.join("\n")).not.toMatch(/secret/);
  });

  it("gives up at once on a permanent refusal", async () => {
    const script = scripted([{ kind: "rejected", status: 401, reason: "HTTP 401 UNAUTHORIZED" }]);
    const send = createRetryingSender({
      post: script.post,
      backoff: fastBackoff(),
      maxDelayMs: 5,
      logger: recordingLogger(),
      signal: new AbortController().signal,
    });
    expect(await send(one)).toEqual({ kind: "rejected", status: 401, reason: "HTTP 401 UNAUTHORIZED" });
    expect(script.calls()).toBe(1);
  });

  it("stops waiting when asked to stop, without another attempt", async () => {
    const script = scripted([{ kind: "transient", reason: "HTTP 500", retryAfterMs: 60_000 }]);
    const abort = new AbortController();
    const send = createRetryingSender({
      post: script.post,
      backoff: createBackoff({ initialMs: 60_000, maxMs: 60_000, factor: 2, jitter: 0 }),
      maxDelayMs: 60_000,
      logger: recordingLogger(),
      signal: abort.signal,
    });
    const outcome = send(one);
    setImmediate(() => abort.abort());
    expect(await outcome).toEqual({ kind: "stopped" });
    expect(script.calls()).toBe(1);
  });

  it("honours Retry-After up to the cap", async () => {
    const script = scripted([
      { kind: "transient", reason: "HTTP 429", retryAfterMs: 40 },
      { kind: "delivered", status: 200 },
    ]);
    const started = Date.now();
    const send = createRetryingSender({
      post: script.post,
      backoff: fastBackoff(),
      maxDelayMs: 1_000,
      logger: recordingLogger(),
      signal: new AbortController().signal,
    });
    expect(await send(one)).toEqual({ kind: "delivered" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });
});

describe("wake latch", () => {
  it("remembers new mail that arrived during a sync, once", async () => {
    const latch = createWakeLatch();
    latch.notify("exists");
    latch.notify("exists");
    expect(await latch.wait(1_000)).toBe("exists");
    expect(await latch.wait(5)).toBe("poll");
  });

  it("lets a stop or a closed connection win over new mail, and keeps them", async () => {
    const latch = createWakeLatch();
    latch.notify("exists");
    latch.notify("closed");
    latch.notify("exists");
    expect(await latch.wait(1_000)).toBe("closed");
    expect(await latch.wait(1_000)).toBe("closed");
    latch.notify("stopped");
    expect(await latch.wait(1_000)).toBe("stopped");
  });

  it("wakes a waiter as soon as something happens", async () => {
    const latch = createWakeLatch();
    const waiting = latch.wait(10_000);
    latch.notify("exists");
    expect(await waiting).toBe("exists");
  });
});

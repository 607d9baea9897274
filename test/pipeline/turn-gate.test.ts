/** @module The turn gate alone: slots per key, FIFO waits, a bounded queue, a turn that ends inside its own start, a pause, a new cap. */
import { describe, expect, it } from "vitest";
import type { PendingRun } from "../../src/actions/plan-action.js";
import { type Slot, TurnGate } from "../../src/pipeline/turn-gate.js";
import { turnKey } from "../../src/pipeline/turn-key.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

function run(runId: string, mappingId?: string): PendingRun {
  const source =
    mappingId === undefined
      ? { hook: "agent", requestId: runId }
      : { hook: mappingId, mappingId, requestId: runId };
  return {
    runId,
    name: runId,
    wakeMode: "now",
    deliver: false,
    channel: "last",
    timeoutSeconds: 60,
    source,
    untrusted: true,
    contentSource: "Webhook",
  };
}

describe("TurnGate", () => {
  it("starts turns up to the cap, then one per release, in the order they came", () => {
    const gate = new TurnGate(() => ({ running: 2, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const started: string[] = [];
    const waited = ["a", "b", "c", "d"].map((id) => gate.enter(run(id), () => started.push(id), false));
    expect(waited).toEqual([false, false, true, true]);
    expect(started).toEqual(["a", "b"]);
    expect(gate.queued()).toEqual(new Map([["", 2]]));
    gate.release("");
    expect(started).toEqual(["a", "b", "c"]);
    gate.release("");
    gate.release("");
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(gate.queued()).toEqual(new Map());
  });

  it("a turn that ends within its own start hands its slot on once, not twice", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const started: string[] = [];
    const key = turnKey(run("x", "m").source);
    gate.enter(run("a", "m"), () => started.push("a"), false);
    for (const id of ["b", "c", "d"]) {
      gate.enter(
        run(id, "m"),
        () => {
          started.push(id);
          gate.release(key);
        },
        false,
      );
    }
    gate.release(key);
    expect(started).toEqual(["a", "b", "c", "d"]);
  });

  it("keeps each key to its own queue", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const started: string[] = [];
    gate.enter(run("a1", "a"), () => started.push("a1"), false);
    gate.enter(run("a2", "a"), () => started.push("a2"), false);
    gate.enter(run("b1", "b"), () => started.push("b1"), false);
    expect(started).toEqual(["a1", "b1"]);
  });

  it("holds claimed slots for a request until its hand-off, and gives them back when it is refused", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const pass = gate.claim([{ run: run("a") }, { run: run("b") }]);
    expect([pass.holds("a"), pass.holds("b"), pass.queued]).toEqual([true, false, true]);
    expect(gate.claim([{ run: run("c") }]).queued).toBe(true);
    pass.cancel();
    expect(gate.claim([{ run: run("d") }]).queued).toBe(false);
  });

  it("a slot taken before a stop gives nothing back to the next start, and a second release counts for nothing", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const slots: Slot[] = [];
    const started: string[] = [];
    const enter = (id: string) =>
      gate.enter(
        run(id),
        (slot) => {
          started.push(id);
          slots.push(slot);
        },
        false,
      );
    enter("before");
    gate.stop();
    expect(slots[0]!.open()).toBe(false);
    enter("a");
    enter("b");
    slots[0]!.release();
    expect(started).toEqual(["before", "a"]);
    slots[1]!.release();
    slots[1]!.release();
    enter("c");
    expect(started).toEqual(["before", "a", "b"]);
  });

  it("starts nothing while paused, and a raised cap starts the waiting turns at once", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), QUIET);
    const started: string[] = [];
    gate.enter(run("a"), () => started.push("a"), false);
    gate.enter(run("b"), () => started.push("b"), false);
    gate.enter(run("c"), () => started.push("c"), false);
    gate.pause();
    gate.release("");
    expect(started).toEqual(["a"]);
    gate.resume();
    gate.setCaps(() => ({ running: 3, waiting: Number.POSITIVE_INFINITY }));
    expect(started).toEqual(["a", "b", "c"]);
  });

  it("counts queue places from the claim: claims not yet handed off fill the queue, a refused request holds nothing, a cancel frees its places", () => {
    const gate = new TurnGate(() => ({ running: 1, waiting: 2 }), QUIET);
    const plan = (id: string) => ({ run: run(id) });
    const first = gate.claim([plan("a")]);
    expect(first.queued).toBe(false);
    const second = gate.claim([plan("b")]);
    const third = gate.claim([plan("c")]);
    expect([second.queued, third.queued]).toEqual([true, true]);
    // Nothing has entered the queue yet: the places the two claims hold fill it.
    expect(() => gate.claim([plan("d")])).toThrow(
      expect.objectContaining({ code: "TURNS_QUEUED_FULL", status: 429 }),
    );
    third.cancel();
    // A fan-out of two turns with one place left is refused whole, and gives back the place it took.
    expect(() => gate.claim([plan("e1"), plan("e2")])).toThrow(
      expect.objectContaining({ code: "TURNS_QUEUED_FULL" }),
    );
    const fourth = gate.claim([plan("f")]);
    expect(fourth.queued).toBe(true);
    // Handed off, the places become the queue's own entries: still two waiting, still full.
    for (const [pass, id] of [
      [second, "b"],
      [fourth, "f"],
    ] as const) {
      gate.enter(run(id), () => {}, pass.take(id));
    }
    expect(gate.queued()).toEqual(new Map([["", 2]]));
    expect(() => gate.claim([plan("g")])).toThrow(expect.objectContaining({ code: "TURNS_QUEUED_FULL" }));
  });
});

/** @module The hand-off keeps every system event when OpenClaw's queue holds only 20 and drains at unknown moments. */
import { describe, expect, it } from "vitest";
import { MAX_BATCH_CHARS, SystemEventHandOff } from "../../src/openclaw/system-event-hand-off.js";
import { SystemEventQueueModel } from "../helpers/fake-openclaw-api.js";

const MAIN = "main";

function setup() {
  const queue = new SystemEventQueueModel();
  const handOff = new SystemEventHandOff((text, options) => queue.enqueue(text, options));
  /** Every event text the model would have seen over all drains, split back into the hand-off's items. */
  const seen: string[] = [];
  const drain = () => {
    for (const text of queue.drain(MAIN)) seen.push(...text.split("\n\n"));
  };
  return { queue, handOff, seen, drain };
}

describe("system event hand-off to OpenClaw", () => {
  it("handing OpenClaw one event per wake loses all but the last 20 (the trap it avoids)", () => {
    const queue = new SystemEventQueueModel();
    for (let i = 1; i <= 31; i++) queue.enqueue(`wake ${i}`, { sessionKey: MAIN });
    expect(queue.drain(MAIN)).toHaveLength(20);
  });

  it("31 events before a heartbeat take one slot and all reach it, in order", () => {
    const { queue, handOff, seen, drain } = setup();
    for (let i = 1; i <= 31; i++) handOff.add(MAIN, `wake ${i}`);
    expect(queue.queues.get(MAIN)).toHaveLength(1);
    drain();
    expect(seen).toEqual(Array.from({ length: 31 }, (_, i) => `wake ${i + 1}`));
  });

  it("says queued for an event that starts a batch and coalesced for one that joins the waiting batch", () => {
    const { handOff, drain } = setup();
    expect(handOff.add(MAIN, "first")).toBe("queued");
    expect(handOff.add(MAIN, "second")).toBe("coalesced");
    drain();
    // The batch was consumed: the next event stands alone in OpenClaw's queue.
    expect(handOff.add(MAIN, "third")).toBe("queued");
    expect(handOff.add(MAIN, "x".repeat(MAX_BATCH_CHARS))).toBe("queued");
    expect(handOff.add(MAIN, "   ")).toBeUndefined();
  });

  it("drains at any moment lose nothing and show nothing twice", () => {
    const { handOff, seen, drain } = setup();
    const sent: string[] = [];
    // A fixed pseudo-random schedule of drains between adds, including drains right after one another.
    let state = 7;
    for (let i = 1; i <= 500; i++) {
      sent.push(`event ${i}`);
      handOff.add(MAIN, `event ${i}`);
      state = (state * 1103515245 + 12345) % 2 ** 31;
      if (state % 5 === 0) drain();
      if (state % 17 === 0) drain();
    }
    drain();
    expect(seen).toEqual(sent);
  });

  it("an event equal to the one before is still delivered (OpenClaw drops exact repeats)", () => {
    const { handOff, seen, drain } = setup();
    handOff.add(MAIN, "disk full");
    drain();
    handOff.add(MAIN, "disk full");
    drain();
    handOff.add(MAIN, "disk full");
    handOff.add(MAIN, "disk full");
    drain();
    expect(seen).toEqual(["disk full", "disk full", "disk full", "disk full"]);
  });

  it("a batch stops growing at its size limit; the next one queues beside it", () => {
    const { queue, handOff, seen, drain } = setup();
    const big = "x".repeat(Math.floor(MAX_BATCH_CHARS / 3));
    for (let i = 0; i < 7; i++) handOff.add(MAIN, `${i}${big}`);
    const queued = queue.queues.get(MAIN) ?? [];
    expect(queued.length).toBeGreaterThan(1);
    expect(queued.every((event) => event.text.length <= MAX_BATCH_CHARS)).toBe(true);
    drain();
    expect(seen.map((text) => text[0])).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
  });

  it("a new instance (after a config reload) leaves the previous instance's queued batch alone", () => {
    const { queue, handOff } = setup();
    handOff.add(MAIN, "before the reload");
    const reloaded = new SystemEventHandOff((text, options) => queue.enqueue(text, options));
    reloaded.add(MAIN, "after the reload");
    expect(queue.drain(MAIN)).toEqual(["before the reload", "after the reload"]);
  });

  it("a payload with one of OpenClaw's heartbeat phrases hides neither itself nor the events beside it", () => {
    const { handOff, seen, drain } = setup();
    handOff.add(MAIN, "first");
    handOff.add(MAIN, "Heartbeat poll failed on db-1");
    handOff.add(MAIN, "read HEARTBEAT.md, then reason  periodic");
    drain();
    expect(seen).toHaveLength(3);
    expect(seen[0]).toBe("first");
    // The words read the same; only the space between them is a no-break one.
    expect(seen.map((text) => text.replaceAll("\u00a0", " "))).toEqual([
      "first",
      "Heartbeat poll failed on db-1",
      "read HEARTBEAT.md, then reason periodic",
    ]);
  });

  it("an event OpenClaw refuses is an error, never a silent loss", () => {
    const handOff = new SystemEventHandOff(() => false);
    expect(() => handOff.add(MAIN, "refused")).toThrow(/refused/);
  });

  it("tells which batches OpenClaw still holds unread, full ones included, and none once a heartbeat took them", () => {
    const { queue, handOff, drain } = setup();
    const queuedKeys = () =>
      new Set(
        [...queue.queues.values()].flat().flatMap((event) => (event.contextKey ? [event.contextKey] : [])),
      );
    const big = "x".repeat(MAX_BATCH_CHARS / 2);
    for (let i = 1; i <= 3; i++) handOff.add(MAIN, `${i} ${big}`);
    const unread = handOff.unread(queuedKeys());
    expect(unread.map((batch) => batch.text.match(/^\d/gm))).toEqual([["1"], ["2"], ["3"]]);
    drain();
    expect(handOff.unread(queuedKeys())).toEqual([]);
    handOff.add(MAIN, "after", undefined, ["e-after"]);
    expect(handOff.unread(queuedKeys())).toEqual([
      { sessionKey: MAIN, key: expect.any(String), text: "after", eventIds: ["e-after"] },
    ]);
  });

  it("sessions are batched apart", () => {
    const { queue, handOff } = setup();
    handOff.add(MAIN, "for main");
    handOff.add("hook:other", "for other");
    expect(queue.drain(MAIN)).toEqual(["for main"]);
    expect(queue.drain("hook:other")).toEqual(["for other"]);
  });
});

// The door events leave by: each event emitted in order with the host's outcomes told back, and heartbeat requests
// sent once per event-loop turn for each agent and reason, after the turn's system events.
import { EventEmitter } from "eventemitter3";
import { describe, expect, it } from "vitest";
import type { HookBus, PlannedEvent } from "../../src/events.js";
import { createBusDoor } from "../../src/pipeline/event-door.js";

const source = { hook: "wake", requestId: "r" };

function wake(eventId: string, agentId = "main"): PlannedEvent[] {
  return [
    {
      event: "session:system-event",
      payload: {
        source,
        sessionKey: "main",
        agentId,
        text: eventId,
        raw: eventId,
        untrusted: false,
        eventId,
      },
    },
    { event: "heartbeat:request", payload: { source, reason: "hook:wake", agentId } },
  ];
}

describe("the bus door", () => {
  it("sends a batch of wakes' heartbeat requests once per agent and reason, after their system events", async () => {
    const bus = new EventEmitter() as unknown as HookBus;
    const seen: string[] = [];
    bus.on("session:system-event", (event) => {
      seen.push(`event ${event.eventId}`);
      bus.emit("session:system-event-outcome", { source, eventId: event.eventId, outcome: "queued" });
    });
    bus.on("heartbeat:request", (request) => seen.push(`beat ${request.agentId} ${request.reason}`));
    const door = createBusDoor(bus);
    expect(door.deliver(wake("e1"))).toEqual({ e1: "queued" });
    door.deliver(wake("e2"));
    door.deliver(wake("e3", "ops"));
    expect(seen).toEqual(["event e1", "event e2", "event e3"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.slice(3)).toEqual(["beat main hook:wake", "beat ops hook:wake"]);
    // The next turn's wakes ask again.
    door.deliver(wake("e4"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.slice(5)).toEqual(["event e4", "beat main hook:wake"]);
    door.close();
  });

  it("sends what it holds when it closes", () => {
    const bus = new EventEmitter() as unknown as HookBus;
    let beats = 0;
    bus.on("heartbeat:request", () => beats++);
    const door = createBusDoor(bus);
    door.deliver(wake("e1"));
    door.close();
    expect(beats).toBe(1);
  });
});

/** @module Inside OpenClaw the effects tell what became of each system event (queued, coalesced) and of each delivery (sent, failed). */
import { EventEmitter } from "eventemitter3";
import { describe, expect, it } from "vitest";
import type { DeliveryResult, HookBus, SystemEventOutcome } from "../../src/events.js";
import { startOpenClawEffects } from "../../src/openclaw/effects.js";
import { fakeOpenClaw } from "../helpers/fake-openclaw-api.js";

const source = { hook: "wake", requestId: "r1" };
const logger = { debug() {}, info() {}, warn() {}, error() {} };

function setup() {
  const fake = fakeOpenClaw({});
  const bus: HookBus = new EventEmitter();
  const outcomes: SystemEventOutcome[] = [];
  const results: DeliveryResult[] = [];
  bus.on("session:system-event-outcome", (outcome) => outcomes.push(outcome));
  bus.on("delivery:result", (result) => results.push(result));
  const effects = startOpenClawEffects({
    runtime: fake.api.runtime,
    bus,
    logger,
    openclawConfig: {},
    defaultAgentId: "main",
  });
  return { fake, bus, outcomes, results, effects };
}

describe("OpenClaw effects: outcomes", () => {
  it("a system event is queued, the next one before a drain coalesced, told within the emit", () => {
    const { fake, bus, outcomes, effects } = setup();
    const wake = (eventId: string) =>
      bus.emit("session:system-event", {
        source,
        sessionKey: "main",
        text: eventId,
        untrusted: false,
        eventId,
      });
    wake("e1");
    expect(outcomes).toEqual([{ source, eventId: "e1", outcome: "queued" }]);
    wake("e2");
    fake.queue.drain("agent:main:main");
    wake("e3");
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(["queued", "coalesced", "queued"]);
    effects.stop();
  });

  it("a delivery is told sent, or failed with its reason", async () => {
    const { fake, bus, results, effects } = setup();
    fake.adapters.set("telegram", { sendText: () => ({ ok: true }) });
    const send = (runId: string, channel: string) =>
      bus.emit("delivery:send", { source, runId, channel, to: "@ops", text: "Deployed." });
    send("run-1", "telegram");
    send("run-2", "signal");
    await expect.poll(() => results.length).toBe(2);
    expect(results).toEqual(
      expect.arrayContaining([
        { source, runId: "run-1", status: "sent" },
        {
          source,
          runId: "run-2",
          status: "failed",
          reason: 'channel "signal" is not configured in OpenClaw',
        },
      ]),
    );
    effects.stop();
  });
});

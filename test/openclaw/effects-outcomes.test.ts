/** @module Inside OpenClaw the effects tell what became of each system event (queued, coalesced) and of each delivery (sent, failed). */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { startEffectsOn } from "../helpers/openclaw-effects.js";

const source = { hook: "wake", requestId: "r1" };

function setup() {
  const fake = fakeOpenClaw({});
  return { fake, ...startEffectsOn(fake) };
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

describe("OpenClaw effects: wakes handed over again after a restart", () => {
  it("are not handed over a third time when the journal's recovery emits their records again: told duplicate", () => {
    const fake = fakeOpenClaw({});
    const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-effects-"));
    try {
      const restartFile = {
        process: "1:0",
        batches: [
          {
            sessionKey: "main",
            agentId: "main",
            key: "hooks-intake:old:1",
            text: "WAKE-A",
            eventIds: ["e-a"],
          },
        ],
      };
      writeFileSync(path.join(dir, "unread-wakes.json"), JSON.stringify(restartFile), { mode: 0o600 });
      const { bus, outcomes, effects } = startEffectsOn(fake, { stateDir: dir });
      // The record (a wake beside an agent turn still running at the stop) was unfinished: recovery emits it again.
      bus.emit("session:system-event", {
        source,
        sessionKey: "main",
        text: "WAKE-A",
        untrusted: false,
        eventId: "e-a",
      });
      bus.emit("session:system-event", {
        source,
        sessionKey: "main",
        text: "WAKE-B",
        untrusted: false,
        eventId: "e-b",
      });
      expect(outcomes.map(({ eventId, outcome }) => [eventId, outcome])).toEqual([
        ["e-a", "duplicate"],
        ["e-b", "coalesced"],
      ]);
      const queued = fake.queue.drain("agent:main:main").join("\n");
      expect(queued.split("WAKE-A").length - 1).toBe(1);
      expect(queued).toContain("WAKE-B");
      // Handed back, they asked for a heartbeat, at OpenClaw's own pace.
      expect(fake.heartbeats).toContainEqual(expect.objectContaining({ intent: "event", agentId: "main" }));
      effects.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

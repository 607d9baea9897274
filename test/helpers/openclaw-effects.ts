/** @module The OpenClaw effects started on the fake OpenClaw's runtime, with a bus that collects what they tell (system-event outcomes, delivery results). */
import { EventEmitter } from "eventemitter3";
import type { DeliveryResult, HookBus, SystemEventOutcome } from "../../src/events.js";
import { startOpenClawEffects } from "../../src/openclaw/effects.js";
import type { FakeOpenClaw } from "./fake-openclaw-api.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export function startEffectsOn(fake: FakeOpenClaw, options: { stateDir?: string } = {}) {
  const bus: HookBus = new EventEmitter();
  const outcomes: SystemEventOutcome[] = [];
  const results: DeliveryResult[] = [];
  bus.on("session:system-event-outcome", (outcome) => outcomes.push(outcome));
  bus.on("delivery:result", (result) => results.push(result));
  const effects = startOpenClawEffects({
    runtime: fake.api.runtime,
    bus,
    logger: quiet,
    openclawConfig: {},
    defaultAgentId: "main",
    ...options,
  });
  return { bus, outcomes, results, effects };
}

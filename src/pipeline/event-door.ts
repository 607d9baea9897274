/** @module The one door events leave by: planned events emitted on the host's bus, what the host told of each collected, a batch's heartbeat requests sent once. */
import type { HeartbeatRequest, HookBus, PlannedEvent, SystemEventOutcome } from "../events.js";
import type { Outcomes } from "../journal/journal.js";

/** Delivers planned events to the host and returns what it told of each, by event id. */
export interface EventDoor {
  /**
   * Emits `events` in order; `alongside` runs within the same delivery, its outcomes counted too (a restart's
   * interrupted turns publish their summaries). Throws what a listener threw: the caller decides what that means.
   */
  deliver(events: readonly PlannedEvent[], alongside?: () => void): Outcomes;
  /** Stops listening to the host's outcomes. */
  close(): void;
}

/**
 * The door onto an eventemitter3 bus: hosts tell a system event's outcome from their listener, by emitting
 * `session:system-event-outcome`, so it arrives within the emit. One standing listener per door: adding and removing
 * one for every wake cost more than the rest of the hand-off (bench/PROFILE.md, "Outcomes").
 */
export function createBusDoor(bus: HookBus): EventDoor {
  let collecting: Outcomes | undefined;
  const onOutcome = (outcome: SystemEventOutcome) => {
    if (collecting !== undefined) collecting[outcome.eventId] = outcome.outcome;
  };
  bus.on("session:system-event-outcome", onOutcome);
  // Heartbeat requests of one event-loop turn, one per agent and reason: a batch of wakes asks once, after all of
  // its system events are queued, rather than once per wake.
  let beats: Map<string, HeartbeatRequest> | undefined;
  const emitBeats = () => {
    const batch = beats;
    beats = undefined;
    if (batch !== undefined) for (const beat of batch.values()) bus.emit("heartbeat:request", beat);
  };
  const holdBeat = (beat: HeartbeatRequest) => {
    if (beats === undefined) {
      beats = new Map();
      setImmediate(emitBeats);
    }
    const key = `${beat.agentId ?? ""}\n${beat.reason}`;
    if (!beats.has(key)) beats.set(key, beat);
  };
  return {
    deliver(events, alongside) {
      // A delivery inside a delivery (a listener that emits) keeps the outer one's outcomes apart from its own.
      const outer = collecting;
      const told = toldOutcomes();
      collecting = told;
      try {
        for (const planned of events) {
          if (planned.event === "heartbeat:request") holdBeat(planned.payload);
          else bus.emit(planned.event, planned.payload as never);
        }
        alongside?.();
      } finally {
        collecting = outer;
      }
      return told;
    },
    close: () => {
      emitBeats();
      bus.off("session:system-event-outcome", onOutcome);
    },
  };
}

/**
 * Where the host's outcomes of a request's system events go, keyed by event id. Without a prototype the object is a
 * hash table from the start: on a plain `{}` every new event id (a UUID) made a hidden class of its own, which cost
 * more per wake than the rest of the hand-off (bench/PROFILE.md, "Outcomes").
 */
function toldOutcomes(): Outcomes {
  return Object.create(null) as Outcomes;
}

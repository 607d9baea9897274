/** @module Heartbeat subsystem: periodic and requested heartbeats, coalesced, each draining the main session's queue. */
import type { HeartbeatRequest, HookBus } from "../events.js";

/** Requests this close together become one heartbeat (a burst of hooks wakes the session once). */
export const HEARTBEAT_COALESCE_MS = 250;
export const PERIODIC_REASON = "interval";

export interface HeartbeatDeps {
  bus: HookBus;
  /** Seconds between periodic heartbeats; 0 = requested heartbeats only. */
  everySeconds: number;
  /** What a heartbeat does; receives the reasons of every request it answers. */
  beat: (reasons: string[]) => void;
  coalesceMs?: number;
}

export interface HeartbeatSubsystem {
  request(reason: string): void;
  /** Stops the timers; a heartbeat that was requested and not yet run runs now, so nothing queued is left behind. */
  stop(): void;
}

export function startHeartbeatSubsystem(deps: HeartbeatDeps): HeartbeatSubsystem {
  const coalesceMs = deps.coalesceMs ?? HEARTBEAT_COALESCE_MS;
  // A Set: finished runs each ask with their own reason, hundreds within one coalescing window under load.
  let reasons = new Set<string>();
  let pending: NodeJS.Timeout | undefined;
  let stopped = false;

  const fire = () => {
    pending = undefined;
    const answered = [...reasons];
    reasons = new Set();
    deps.beat(answered);
  };

  const request = (reason: string) => {
    if (stopped) return;
    reasons.add(reason);
    if (pending === undefined) pending = setTimeout(fire, coalesceMs);
  };

  const onRequest = (event: HeartbeatRequest) => request(event.reason);
  deps.bus.on("heartbeat:request", onRequest);

  const periodic =
    deps.everySeconds > 0 ? setInterval(() => request(PERIODIC_REASON), deps.everySeconds * 1000) : undefined;
  // Timers alone never keep a gateway alive; the server does.
  periodic?.unref();

  return {
    request,
    stop() {
      if (stopped) return;
      stopped = true;
      deps.bus.off("heartbeat:request", onRequest);
      if (periodic) clearInterval(periodic);
      if (pending !== undefined) {
        clearTimeout(pending);
        fire();
      }
    },
  };
}

/** @module The four effects of the plugin's events inside OpenClaw: system events, heartbeats, agent turns, deliveries. */
import { AsyncResource } from "node:async_hooks";
import type {
  AgentTurn,
  DeliverySend,
  HeartbeatRequest,
  HookBus,
  HostLogger,
  SystemEvent,
} from "../index.js";
import { AgentTurns } from "./agent-turns.js";
import { deliver } from "./deliveries.js";
import type { OpenClawRuntime } from "./openclaw-api.js";
import { SystemEventHandOff } from "./system-event-hand-off.js";

export interface OpenClawEffects {
  stop(): void;
}

export function startOpenClawEffects(options: {
  runtime: OpenClawRuntime;
  bus: HookBus;
  logger: HostLogger;
  openclawConfig: () => unknown;
}): OpenClawEffects {
  const { runtime, bus, logger } = options;
  const handOff = new SystemEventHandOff((text, eventOptions) =>
    runtime.system.enqueueSystemEvent(text, eventOptions),
  );
  const turns = new AgentTurns(runtime, bus, logger);

  const onSystemEvent = (event: SystemEvent) => {
    try {
      handOff.add(event.sessionKey, event.text);
    } catch (error) {
      logger.error(`system event not queued in OpenClaw: ${(error as Error).message}`, {
        eventId: event.eventId,
        requestId: event.source.requestId,
      });
    }
  };
  // `immediate` is OpenClaw's own intent for a wake with mode `now`; `event` would wait out its 30 s heartbeat gap.
  const onHeartbeat = (request: HeartbeatRequest) => {
    try {
      runtime.system.requestHeartbeat({ source: "hook", intent: "immediate", reason: request.reason });
    } catch (error) {
      logger.error(`heartbeat request refused by OpenClaw: ${(error as Error).message}`, {
        requestId: request.source.requestId,
      });
    }
  };
  const onAgentTurn = (turn: AgentTurn) => turns.start(turn);
  const onDelivery = (delivery: DeliverySend) => {
    void deliver(runtime, options.openclawConfig, logger, delivery);
  };

  // Events are emitted while OpenClaw's scope for the sender's request is current, and an `auth: "plugin"` route's
  // scope carries no operator rights: a subagent run started there fails with "missing scope: operator.write". Each
  // effect runs in the context the service started in instead, where OpenClaw knows the call as this plugin's own
  // background work; the sender's request ends when it has its answer.
  const asPlugin = <T>(listener: (payload: T) => void) => AsyncResource.bind(listener);
  const listeners = {
    "session:system-event": asPlugin(onSystemEvent),
    "heartbeat:request": asPlugin(onHeartbeat),
    "session:agent-turn": asPlugin(onAgentTurn),
    "delivery:send": asPlugin(onDelivery),
  };
  bus.on("session:system-event", listeners["session:system-event"]);
  bus.on("heartbeat:request", listeners["heartbeat:request"]);
  bus.on("session:agent-turn", listeners["session:agent-turn"]);
  bus.on("delivery:send", listeners["delivery:send"]);
  return {
    stop() {
      bus.off("session:system-event", listeners["session:system-event"]);
      bus.off("heartbeat:request", listeners["heartbeat:request"]);
      bus.off("session:agent-turn", listeners["session:agent-turn"]);
      bus.off("delivery:send", listeners["delivery:send"]);
      turns.stop();
      handOff.clear();
    },
  };
}

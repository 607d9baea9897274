/** @module The four effects of the plugin's events inside OpenClaw: system events, heartbeats, agent turns, deliveries. */
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

  bus.on("session:system-event", onSystemEvent);
  bus.on("heartbeat:request", onHeartbeat);
  bus.on("session:agent-turn", onAgentTurn);
  bus.on("delivery:send", onDelivery);
  return {
    stop() {
      bus.off("session:system-event", onSystemEvent);
      bus.off("heartbeat:request", onHeartbeat);
      bus.off("session:agent-turn", onAgentTurn);
      bus.off("delivery:send", onDelivery);
      turns.stop();
      handOff.clear();
    },
  };
}

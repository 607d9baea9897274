/** @module The four effects of the plugin's events inside OpenClaw: system events, heartbeats, agent turns, deliveries. */
import { AsyncResource } from "node:async_hooks";
import type {
  AgentTurn,
  DeliverySend,
  HeartbeatRequest,
  HookBus,
  HookEventName,
  HookEventPayload,
  HostLogger,
  SystemEvent,
} from "../index.js";
import { AgentTurns } from "./agent-turns.js";
import { deliver } from "./deliveries.js";
import type { OpenClawRuntime } from "./openclaw-api.js";
import { type HandedBatch, SystemEventHandOff } from "./system-event-hand-off.js";
import { queuedContextKeys, saveUnread, takeUnread } from "./unread-wakes.js";

export interface OpenClawEffects {
  /** The host contract's `admitAgentTurn`: OpenClaw accepts the run, or the request is refused. */
  admitAgentTurn(turn: AgentTurn): Promise<void>;
  stop(): void;
}

export interface OpenClawEffectsOptions {
  runtime: OpenClawRuntime;
  bus: HookBus;
  logger: HostLogger;
  /** OpenClaw's config as this registration saw it; channel adapters take it with each send. */
  openclawConfig: unknown;
  /** The plugin's own directory in OpenClaw's state, where wakes OpenClaw had not read are kept across its restart. */
  stateDir?: string | undefined;
  /** The agent of events that name none. */
  defaultAgentId: string;
}

/** What every effect's listener works with: OpenClaw, the bus, the log, the hand-off and the default agent. */
interface EffectsContext {
  runtime: OpenClawRuntime;
  bus: HookBus;
  logger: HostLogger;
  handOff: SystemEventHandOff;
  defaultAgentId: string;
}

/**
 * Events are emitted while OpenClaw's scope for the sender's request is current, and an `auth: "plugin"` route's
 * scope carries no operator rights: a subagent run started there fails with "missing scope: operator.write". Each
 * effect runs in the context the service started in instead, where OpenClaw knows the call as this plugin's own
 * background work; the sender's request ends when it has its answer. Returns the unsubscribe.
 */
function subscribeAsPlugin<E extends HookEventName>(
  bus: HookBus,
  event: E,
  listener: (payload: HookEventPayload<E>) => void,
): () => void {
  const bound = AsyncResource.bind(listener) as Parameters<HookBus["on"]>[1];
  bus.on(event, bound);
  return () => bus.off(event, bound);
}

export function startOpenClawEffects(options: OpenClawEffectsOptions): OpenClawEffects {
  const { runtime, bus, logger } = options;
  const handOff = new SystemEventHandOff((text, eventOptions) =>
    runtime.system.enqueueSystemEvent(text, eventOptions),
  );
  // Events from a journal written before agents existed name none: they go to the agent a request naming none
  // goes to now, never to whichever agent OpenClaw would pick for unscoped work (with several it may pick none).
  const defaultAgentId = options.defaultAgentId;
  const context: EffectsContext = { runtime, bus, logger, handOff, defaultAgentId };
  const turns = new AgentTurns(runtime, bus, logger, defaultAgentId);
  // Admission is asked from within the sender's request, whose scope has no operator rights: it runs in the
  // service's context, captured now, like the effects below.
  const serviceContext = new AsyncResource("hooks-intake.admission");

  const held = handOverUnreadWakes(context, options.stateDir);
  const unsubscribe = [
    subscribeAsPlugin(bus, "session:system-event", systemEventListener(context, held)),
    subscribeAsPlugin(bus, "heartbeat:request", heartbeatListener(context)),
    subscribeAsPlugin(bus, "session:agent-turn", (turn: AgentTurn) => turns.start(turn)),
    subscribeAsPlugin(bus, "delivery:send", deliveryListener(context, options.openclawConfig)),
  ];
  return {
    admitAgentTurn: (turn) => serviceContext.runInAsyncScope(() => turns.admit(turn)),
    stop() {
      for (const off of unsubscribe) off();
      turns.stop();
      if (options.stateDir !== undefined) keepUnreadWakes(context, options.stateDir);
      handOff.clear();
    },
  };
}

/**
 * Queues each system event in OpenClaw, and tells its outcome. `held` are the events this start already holds from
 * before (handed over again from the restart file, or still in OpenClaw's queue after a reload): the journal's
 * recovery emits an unfinished record's events once more, and OpenClaw must not get them twice. Told as `duplicate`,
 * as the reference gateway tells an event id it already holds.
 */
function systemEventListener(
  { bus, logger, handOff, defaultAgentId }: EffectsContext,
  held: ReadonlySet<string>,
): (event: SystemEvent) => void {
  return (event) => {
    if (held.has(event.eventId)) {
      bus.emit("session:system-event-outcome", {
        source: event.source,
        eventId: event.eventId,
        outcome: "duplicate",
      });
      return;
    }
    let outcome: ReturnType<SystemEventHandOff["add"]>;
    try {
      outcome = handOff.add(event.sessionKey, event.text, event.agentId ?? defaultAgentId, [event.eventId]);
    } catch (error) {
      logger.error(`system event not queued in OpenClaw: ${(error as Error).message}`, {
        eventId: event.eventId,
        requestId: event.source.requestId,
      });
      // Thrown on: the request's record then stays unfinished, and the next start hands the event over again.
      throw error;
    }
    // Told at once, from this listener: the plugin's journal puts it on the record's `done` line.
    if (outcome !== undefined)
      bus.emit("session:system-event-outcome", { source: event.source, eventId: event.eventId, outcome });
  };
}

/** `immediate` is OpenClaw's own intent for a wake with mode `now`; `event` would wait out its 30 s heartbeat gap. */
function heartbeatListener({
  runtime,
  logger,
  defaultAgentId,
}: EffectsContext): (request: HeartbeatRequest) => void {
  return (request) => {
    try {
      runtime.system.requestHeartbeat({
        source: "hook",
        intent: "immediate",
        reason: request.reason,
        agentId: request.agentId ?? defaultAgentId,
      });
    } catch (error) {
      logger.error(`heartbeat request refused by OpenClaw: ${(error as Error).message}`, {
        requestId: request.source.requestId,
      });
    }
  };
}

/** Sends each delivery through OpenClaw's channel adapters; the result is told on the bus. */
function deliveryListener(
  { runtime, bus, logger, defaultAgentId }: EffectsContext,
  openclawConfig: unknown,
): (delivery: DeliverySend) => void {
  return (delivery) => {
    void deliver(runtime, openclawConfig, logger, bus, {
      ...delivery,
      agentId: delivery.agentId ?? defaultAgentId,
    });
  };
}

/**
 * OpenClaw's queue is in memory: what it held unread when the previous process stopped goes to it again, once.
 * After a reload in this process the queue still holds them: they are only watched, for OpenClaw's next stop.
 * Returns the ids of the events those wakes hold, which this start must not queue again.
 */
function handOverUnreadWakes(context: EffectsContext, stateDir: string | undefined): Set<string> {
  const { handOff, logger } = context;
  const left =
    stateDir === undefined
      ? { stillQueued: false, batches: [] }
      : takeUnread(stateDir, (line) => logger.warn(line));
  if (left.stillQueued) handOff.adopt(left.batches);
  const held = new Set<string>();
  for (const batch of left.batches) for (const id of batch.eventIds ?? []) held.add(id);
  if (!left.stillQueued) {
    const woken = queueCarriedBatches(context, left.batches);
    wakeAfterRestart(context, woken);
  }
  return held;
}

/** Queues again the batches the previous process left unread; returns the agents whose queues got one. */
function queueCarriedBatches(
  { handOff, logger, defaultAgentId }: EffectsContext,
  carried: readonly HandedBatch[],
): Set<string> {
  const woken = new Set<string>();
  for (const batch of carried) {
    try {
      const agentId = batch.agentId ?? defaultAgentId;
      handOff.add(batch.sessionKey, batch.text, agentId, batch.eventIds);
      woken.add(agentId);
    } catch (error) {
      logger.error(
        `a wake OpenClaw had not read before it restarted was refused: ${(error as Error).message}`,
      );
    }
  }
  if (carried.length > 0) {
    logger.info("handed over again the wakes OpenClaw had not read before it restarted", {
      batches: carried.length,
    });
  }
  return woken;
}

/** They waited for a heartbeat before the restart; they wait for one now (OpenClaw's own pace, intent `event`). */
function wakeAfterRestart({ runtime, logger }: EffectsContext, agentIds: Iterable<string>): void {
  for (const agentId of agentIds) {
    try {
      runtime.system.requestHeartbeat({ source: "hook", intent: "event", reason: "hook:restart", agentId });
    } catch (error) {
      logger.warn(`heartbeat request refused by OpenClaw: ${(error as Error).message}`);
    }
  }
}

/** Written now, synchronously: on exit OpenClaw clears its queues right after its plugins' services stopped. */
function keepUnreadWakes({ handOff, logger }: EffectsContext, stateDir: string): void {
  try {
    saveUnread(stateDir, handOff.unread(queuedContextKeys()));
  } catch (error) {
    logger.error(
      `the wakes OpenClaw has not read yet could not be kept for its restart: ${(error as Error).message}`,
    );
  }
}

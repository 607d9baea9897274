/** @module The bus contract: every event the plugin emits or listens to, one map, one bus type. */
import type { EventEmitter } from "eventemitter3";
import * as v from "valibot";
import { SessionModeSchema, ThinkingSchema, WakeModeSchema } from "./vocabulary.js";

export const EventSourceSchema = v.object({
  hook: v.string(),
  mappingId: v.optional(v.string()),
  requestId: v.string(),
});
export type EventSource = v.InferOutput<typeof EventSourceSchema>;

/**
 * The agent an event is for. The plugin always sets it; optional because journals written before agents existed
 * hold events without it (a host reads its absence as its default agent).
 */
const AgentIdField = v.optional(v.string());

export const SystemEventSchema = v.object({
  source: EventSourceSchema,
  /** The session of `agentId`: its main session (`mainSessionKey`) for a wake or a run's summary. */
  sessionKey: v.string(),
  agentId: AgentIdField,
  /** What the session sees: wrapped in the safety boundary unless the mapping allowed raw content. */
  text: v.string(),
  /** The unwrapped text, for logs and tools that need the original. */
  raw: v.optional(v.string()),
  untrusted: v.boolean(),
  eventId: v.string(),
});

export const AgentTurnSchema = v.object({
  source: EventSourceSchema,
  runId: v.string(),
  sessionKey: v.string(),
  agentId: AgentIdField,
  /** `isolated` (also when absent): the turn starts with no earlier context; `persistent`: it continues the key's. */
  sessionMode: v.optional(SessionModeSchema),
  message: v.string(),
  raw: v.string(),
  untrusted: v.boolean(),
  name: v.string(),
  model: v.optional(v.string()),
  thinking: v.optional(ThinkingSchema),
  timeoutSeconds: v.number(),
  wakeMode: WakeModeSchema,
  deliver: v.boolean(),
  channel: v.string(),
  to: v.optional(v.string()),
});

export const AgentTurnFinishedSchema = v.object({
  source: EventSourceSchema,
  runId: v.string(),
  status: v.picklist(["ok", "error", "timeout"]),
  reply: v.optional(v.string()),
  /**
   * What a host knows of the reply when it does not hand over its text: OpenClaw tells a turn that chose silence
   * (`silent`) apart from one that said nothing (`empty`). A reply's text, when given, says it on its own.
   */
  replyDisposition: v.optional(v.picklist(["visible", "silent", "empty"])),
  summary: v.optional(v.string()),
  error: v.optional(v.string()),
});

export const HeartbeatRequestSchema = v.object({
  source: EventSourceSchema,
  reason: v.string(),
  /** Whose heartbeat: the agent the wake or the run was for. */
  agentId: AgentIdField,
});

export const DeliverySendSchema = v.object({
  source: EventSourceSchema,
  runId: v.string(),
  /** The agent whose run it was: `last` is that agent's main session's route. */
  agentId: AgentIdField,
  channel: v.string(),
  to: v.optional(v.string()),
  text: v.string(),
});

/**
 * What became of a system event, told by the host from its `session:system-event` listener (synchronously, so the
 * journal's `done` line has it): `queued` as a new entry, `coalesced` into entries already waiting for the same
 * heartbeat or batch, `duplicate` when the host already held that event id.
 */
export const SystemEventOutcomeSchema = v.object({
  source: EventSourceSchema,
  eventId: v.string(),
  outcome: v.picklist(["queued", "coalesced", "duplicate"]),
});

/** What became of a `delivery:send`, told by the host once it knows: sent, or failed with a short reason (never the text). */
export const DeliveryResultSchema = v.object({
  source: EventSourceSchema,
  runId: v.string(),
  status: v.picklist(["sent", "failed"]),
  reason: v.optional(v.string()),
});

export const HookRequestSchema = v.object({
  source: EventSourceSchema,
  method: v.string(),
  hook: v.string(),
  status: v.number(),
  mappingId: v.optional(v.string()),
  durationMs: v.number(),
});

/** One schema per event name; the JSON Schemas in `schemas/events/` are generated from these. */
export const HOOK_EVENT_SCHEMAS = {
  "session:system-event": SystemEventSchema,
  "session:agent-turn": AgentTurnSchema,
  "session:agent-turn-finished": AgentTurnFinishedSchema,
  "heartbeat:request": HeartbeatRequestSchema,
  "delivery:send": DeliverySendSchema,
  "hooks:request": HookRequestSchema,
  "session:system-event-outcome": SystemEventOutcomeSchema,
  "delivery:result": DeliveryResultSchema,
} as const;

export type SystemEvent = v.InferOutput<typeof SystemEventSchema>;
export type AgentTurn = v.InferOutput<typeof AgentTurnSchema>;
export type AgentTurnFinished = v.InferOutput<typeof AgentTurnFinishedSchema>;
export type HeartbeatRequest = v.InferOutput<typeof HeartbeatRequestSchema>;
export type DeliverySend = v.InferOutput<typeof DeliverySendSchema>;
export type HookRequest = v.InferOutput<typeof HookRequestSchema>;
export type SystemEventOutcome = v.InferOutput<typeof SystemEventOutcomeSchema>;
export type DeliveryResult = v.InferOutput<typeof DeliveryResultSchema>;

export type HookEventName = keyof typeof HOOK_EVENT_SCHEMAS;
export type HookEventPayload<E extends HookEventName> = v.InferOutput<(typeof HOOK_EVENT_SCHEMAS)[E]>;

/** The event map: event name → listener signature, as eventemitter3 expects it. */
export type HookEvents = {
  [E in HookEventName]: (payload: HookEventPayload<E>) => void;
};

export type HookBus = EventEmitter<HookEvents>;

/** Events a host emits to tell what became of the plugin's: never planned by the plugin. */
export type HostToldEventName = "session:system-event-outcome" | "delivery:result";

/** An event the pipeline plans to emit; kept as data so replay can show it without emitting. */
export type PlannedEvent = {
  [E in Exclude<HookEventName, HostToldEventName>]: { event: E; payload: HookEventPayload<E> };
}[Exclude<HookEventName, HostToldEventName>];

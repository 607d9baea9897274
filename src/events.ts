/** @module The bus contract: every event the plugin emits or listens to, one map, one bus type. */
import type { EventEmitter } from "eventemitter3";
import * as v from "valibot";
import { ThinkingSchema, WakeModeSchema } from "./vocabulary.js";

export const EventSourceSchema = v.object({
  hook: v.string(),
  mappingId: v.optional(v.string()),
  requestId: v.string(),
});
export type EventSource = v.InferOutput<typeof EventSourceSchema>;

export const SystemEventSchema = v.object({
  source: EventSourceSchema,
  sessionKey: v.string(),
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
  summary: v.optional(v.string()),
  error: v.optional(v.string()),
});

export const HeartbeatRequestSchema = v.object({
  source: EventSourceSchema,
  reason: v.string(),
});

export const DeliverySendSchema = v.object({
  source: EventSourceSchema,
  runId: v.string(),
  channel: v.string(),
  to: v.optional(v.string()),
  text: v.string(),
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
} as const;

export type SystemEvent = v.InferOutput<typeof SystemEventSchema>;
export type AgentTurn = v.InferOutput<typeof AgentTurnSchema>;
export type AgentTurnFinished = v.InferOutput<typeof AgentTurnFinishedSchema>;
export type HeartbeatRequest = v.InferOutput<typeof HeartbeatRequestSchema>;
export type DeliverySend = v.InferOutput<typeof DeliverySendSchema>;
export type HookRequest = v.InferOutput<typeof HookRequestSchema>;

export type HookEventName = keyof typeof HOOK_EVENT_SCHEMAS;
export type HookEventPayload<E extends HookEventName> = v.InferOutput<(typeof HOOK_EVENT_SCHEMAS)[E]>;

/** The event map: event name → listener signature, as eventemitter3 expects it. */
export type HookEvents = {
  [E in HookEventName]: (payload: HookEventPayload<E>) => void;
};

export type HookBus = EventEmitter<HookEvents>;

/** An event the pipeline plans to emit; kept as data so replay can show it without emitting. */
export type PlannedEvent = {
  [E in HookEventName]: { event: E; payload: HookEventPayload<E> };
}[HookEventName];

/** @module Turns a validated action into the events it causes, as data: the handler emits them, replay shows them. */

import type { Ids } from "../clock.js";
import type { EventSource, PlannedEvent } from "../events.js";
import type { JournalRun } from "../journal/records.js";
import { type ExternalSource, wrapExternalContent } from "../safety/wrap-external.js";
import type { WakeMode } from "../vocabulary.js";
import { capText } from "./cap-text.js";
import type { HookAction } from "./validate-action.js";

export interface PlanContext {
  source: EventSource;
  mainSessionKey: string;
  /** The mapping turned the safety wrapper off (`allowUnsafeExternalContent`). */
  allowUnsafe: boolean;
  contentSource: ExternalSource;
  /** The mapping's `instructions`: the operator's own text, which stands before the wrapper, outside it. */
  instructions?: string | undefined;
  /** The longest text a wake or a turn carries (`hooks.maxTextChars`): a longer one is cut and says so. */
  maxTextChars: number;
  ids: Ids;
}

/**
 * An agent run the plugin waits on, to publish its summary, heartbeat and delivery. Its shape is the journal's
 * (the record of an admitted request carries its runs), so the two cannot drift apart.
 */
export type PendingRun = JournalRun;

export type ActionResponse =
  | { kind: "wake"; mode: WakeMode; eventId: string }
  | { kind: "agent"; runId: string; sessionKey: string };

export interface ActionPlan {
  /** The validated action the events came from (replay shows it). */
  action: HookAction;
  events: PlannedEvent[];
  run?: PendingRun;
  response: ActionResponse;
}

/**
 * The text the session sees: the payload's, wrapped unless the mapping allowed it raw, after the operator's
 * instructions when the mapping has some. Only the instructions (config text) stand outside the wrapper.
 */
function guard(raw: string, context: PlanContext): { text: string; untrusted: boolean } {
  const untrusted = !context.allowUnsafe;
  // The event's `raw` is the payload's text (cut the same way, by the caller): the wrapped text holds it whole.
  const text = untrusted ? wrapExternalContent(raw, context.contentSource, context.ids.markerId()) : raw;
  const { instructions } = context;
  return { text: instructions === undefined ? text : `${instructions}\n\n${text}`, untrusted };
}

export function planAction(action: HookAction, context: PlanContext): ActionPlan {
  const { source } = context;
  if (action.kind === "wake") {
    const eventId = context.ids.uuid();
    const raw = capText(action.text, context.maxTextChars);
    const { text, untrusted } = guard(raw, context);
    const events: PlannedEvent[] = [
      {
        event: "session:system-event",
        payload: {
          source,
          sessionKey: context.mainSessionKey,
          agentId: action.agentId,
          text,
          raw,
          untrusted,
          eventId,
        },
      },
    ];
    if (action.mode === "now") {
      events.push({
        event: "heartbeat:request",
        payload: { source, reason: "hook:wake", agentId: action.agentId },
      });
    }
    return { action, events, response: { kind: "wake", mode: action.mode, eventId } };
  }

  const runId = context.ids.uuid();
  const raw = capText(action.message, context.maxTextChars);
  const { text, untrusted } = guard(raw, context);
  const turn: PlannedEvent = {
    event: "session:agent-turn",
    payload: {
      source,
      runId,
      sessionKey: action.sessionKey,
      agentId: action.agentId,
      sessionMode: action.sessionMode,
      message: text,
      raw,
      untrusted,
      name: action.name,
      timeoutSeconds: action.timeoutSeconds,
      wakeMode: action.wakeMode,
      deliver: action.deliver,
      channel: action.channel,
    },
  };
  if (action.model !== undefined) turn.payload.model = action.model;
  if (action.thinking !== undefined) turn.payload.thinking = action.thinking;
  if (action.to !== undefined) turn.payload.to = action.to;

  const run: PendingRun = {
    runId,
    agentId: action.agentId,
    name: action.name,
    wakeMode: action.wakeMode,
    deliver: action.deliver,
    channel: action.channel,
    timeoutSeconds: action.timeoutSeconds,
    source,
    untrusted,
    contentSource: context.contentSource,
  };
  if (action.to !== undefined) run.to = action.to;
  return { action, events: [turn], run, response: { kind: "agent", runId, sessionKey: action.sessionKey } };
}

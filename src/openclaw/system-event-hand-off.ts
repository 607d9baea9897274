/** @module Hands system events to OpenClaw's session queue without loss: one combined event per batch, replaced as it grows. */
import { randomUUID } from "node:crypto";
import type { OpenClawRuntime } from "./openclaw-api.js";

type EnqueueSystemEvent = OpenClawRuntime["system"]["enqueueSystemEvent"];

/** A combined event stops growing at this size; the next event starts a new batch beside it. */
export const MAX_BATCH_CHARS = 16_000;
/** OpenClaw keeps 20 events per session: a full batch older than that is gone from its queue either way. */
const MAX_FULL_BATCHES = 20;
const CONTEXT_KEY = "hooks-intake";

interface Batch {
  /** OpenClaw's contextKey for this batch: `replace` swaps the queued copy for the grown one in place. */
  key: string;
  /** The events not yet consumed, each after the one before and a blank line (appended, never re-joined). */
  text: string;
  /** Where OpenClaw queues it: the session, under the agent when one is named. */
  target: Target;
  /** The plugin's ids of the events in `text`: a restart hands them over again, and recovery must not a third time. */
  eventIds: string[];
}

/** A session of one agent, as `enqueueSystemEvent` takes it (`main` is a different session for each agent). */
interface Target {
  sessionKey: string;
  agentId?: string;
}

/**
 * OpenClaw hides a system event whose text holds one of the phrases of its own heartbeat notes ("heartbeat poll",
 * "heartbeat wake", "reason periodic", or "read HEARTBEAT.md" at the start). In a combined event one such phrase in
 * one payload would hide every event beside it, so a no-break space goes between the words: the text reads the same.
 */
const OPENCLAW_HIDDEN_PHRASES =
  /\b(heartbeat)\s+(poll|wake)|\b(reason)\s+(periodic)|\b(read)\s+(heartbeat\.md)/gi;
function defuse(text: string): string {
  return text.replace(OPENCLAW_HIDDEN_PHRASES, (phrase) => phrase.replace(/\s+/, "\u00a0"));
}

/**
 * OpenClaw keeps at most 20 queued events per session (the oldest dropped silently) and drops an event equal to the
 * last one. Handing it one event per wake loses wakes under a burst, so events are combined: each session has one
 * open batch, queued under its own contextKey and replaced in place each time it grows, so a burst of any size
 * takes one slot.
 *
 * Whether OpenClaw consumed the batch meanwhile (a heartbeat or a turn drains the queue) is learned without reading
 * its internals: `replace` with the text already queued returns false when that very event is still there. When it
 * returns true the batch was consumed and that call queued it again, so the next `replace` under the same key, with
 * only the new events, swaps the re-queued copy out in the same tick: nothing is lost and nothing is seen twice.
 * The one loss this cannot see is the batch pushed out by 20 newer events from other producers before it grew again.
 */
/** A batch OpenClaw may still hold unread, with its session, agent and contextKey: what a restart would lose. */
export interface HandedBatch {
  sessionKey: string;
  agentId?: string | undefined;
  key: string;
  text: string;
  /** The events it holds (absent in a file written before ids were kept). */
  eventIds?: string[] | undefined;
}

/** One key per (agent, session), for the batches of that queue. */
const queueKey = ({ sessionKey, agentId }: Target) =>
  agentId === undefined ? sessionKey : `${agentId}\u0000${sessionKey}`;
const sameQueue = (batch: HandedBatch, target: Target) =>
  batch.sessionKey === target.sessionKey && batch.agentId === target.agentId;

export class SystemEventHandOff {
  private readonly open = new Map<string, Batch>();
  /** Per queue, the batches that filled up before the open one: unread until a heartbeat takes the open one. */
  private readonly full = new Map<string, Batch[]>();
  /** A previous registration's batches in this process's queue (after a reload): watched, never replaced. */
  private adopted: HandedBatch[] = [];
  private sequence = 0;
  /**
   * OpenClaw's queue outlives a registration: after a config reload the new instance's batches must not share a
   * contextKey with the previous instance's, or its first `replace` would remove a batch no heartbeat has read yet.
   */
  private readonly instance = randomUUID().slice(0, 8);

  constructor(private readonly enqueue: EnqueueSystemEvent) {}

  /**
   * Adds one event for the session; it is in OpenClaw's queue when this returns, or this throws. Returns `queued` when
   * it started a batch of its own (none was open, the open one was full, or a heartbeat had consumed it), `coalesced`
   * when it joined the open batch still waiting in OpenClaw's queue; undefined for an empty text (nothing queued).
   */
  add(
    sessionKey: string,
    text: string,
    agentId?: string,
    eventIds: readonly string[] = [],
  ): "queued" | "coalesced" | undefined {
    const item = defuse(text.trim());
    if (item === "") return undefined;
    // Batches are per (agent, session): `main` is a different session for each agent.
    const target: Target = agentId === undefined ? { sessionKey } : { sessionKey, agentId };
    const openKey = queueKey(target);
    let batch = this.open.get(openKey);
    // Consumed: the probe queued the old text again, and the text below (the new event alone) replaces it.
    let consumed = false;
    if (batch && this.enqueue(batch.text, { ...target, contextKey: batch.key, replace: true })) {
      consumed = true;
      // A heartbeat takes the session's whole queue: the full batches before this one went with it.
      this.full.delete(openKey);
      this.adopted = this.adopted.filter((handed) => !sameQueue(handed, target));
    } else if (batch && batch.text.length + item.length + 2 > MAX_BATCH_CHARS) {
      const full = this.full.get(openKey) ?? [];
      full.push(batch);
      if (full.length > MAX_FULL_BATCHES) full.shift();
      this.full.set(openKey, full);
      batch = undefined;
    }
    if (!batch) {
      batch = { key: `${CONTEXT_KEY}:${this.instance}:${++this.sequence}`, text: "", target, eventIds: [] };
      this.open.set(openKey, batch);
    }
    const previous = batch.text;
    const previousIds = batch.eventIds;
    batch.text = consumed || previous === "" ? item : `${previous}\n\n${item}`;
    batch.eventIds = consumed || previous === "" ? [...eventIds] : [...previousIds, ...eventIds];
    // False here means OpenClaw refused the event (its session store was replaced, say): never a silent loss.
    if (
      !this.enqueue(batch.text, { ...target, contextKey: batch.key, replace: true }) &&
      batch.text !== previous
    ) {
      batch.text = previous;
      batch.eventIds = previousIds;
      throw new Error("OpenClaw refused the system event");
    }
    return previous === "" || consumed ? "queued" : "coalesced";
  }

  /**
   * The batches still in OpenClaw's queue, oldest first. `queued` is the set of contextKeys OpenClaw's queues hold
   * (read from its process, see unread-wakes.ts); without it the open batch is probed the way `add` does, which
   * queues a batch a heartbeat had taken once more: that fallback can show the agent one batch twice.
   */
  unread(queued: ReadonlySet<string> | undefined): HandedBatch[] {
    // A previous registration's batch can only be looked for: probing it would queue it again.
    const unread = queued ? this.adopted.filter((batch) => queued.has(batch.key)) : [];
    for (const [openKey, batch] of this.open) {
      const batches = [...(this.full.get(openKey) ?? []), batch];
      for (const handed of batches) {
        if (handed.text === "") continue;
        const waiting = queued
          ? queued.has(handed.key)
          : handed === batch &&
            !this.enqueue(handed.text, { ...handed.target, contextKey: handed.key, replace: true });
        if (waiting)
          unread.push({ ...handed.target, key: handed.key, text: handed.text, eventIds: handed.eventIds });
      }
    }
    return unread;
  }

  /**
   * Watches batches a previous registration in this process left in OpenClaw's queue (a reload): `unread` reports
   * them while OpenClaw still holds them, so an OpenClaw restart after the reload does not lose them.
   */
  adopt(batches: readonly HandedBatch[]): void {
    this.adopted.push(...batches);
  }

  /** Forgets the open batches; what was handed over stays in OpenClaw's queue. */
  clear(): void {
    this.open.clear();
    this.full.clear();
    this.adopted = [];
  }
}

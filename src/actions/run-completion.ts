/** @module Waits for each agent run to finish (or for its deadline), then publishes summary, heartbeat and delivery. */

import type { Ids } from "../clock.js";
import { errorMessage } from "../errors.js";
import type { AgentTurnFinished, DeliveryResult, HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { ReplyKind as JournalReplyKind } from "../journal/records.js";
import { type HookMetrics, NO_METRICS } from "../metrics/metrics.js";
import { wrapExternalContent } from "../safety/wrap-external.js";
import type { PendingRun } from "./plan-action.js";
import { deliverableReply, type ReplyKind, replyKind, summaryParts } from "./summarize-run.js";

/** Extra time past `timeoutSeconds` before the plugin gives up on the session subsystem's answer. */
export const DEFAULT_DEADLINE_GRACE_MS = 5_000;

/** Told once the run's summary (and heartbeat, delivery) went out, with how the run ended and, if ok, its reply's kind. */
export type RunPublished = (
  status: AgentTurnFinished["status"] | "interrupted",
  reply?: JournalReplyKind,
) => void;

/** Told what became of the run's delivery, as the host said: `sent`, or `failed: <reason>`. */
export type RunDelivered = (result: string) => void;

/** Who hears of a tracked run's end. */
export interface RunListeners {
  published?: RunPublished | undefined;
  delivered?: RunDelivered | undefined;
  /** Told once the run is over, even when publishing its summary threw: a slot it held is free again. */
  ended?: (() => void) | undefined;
}

/** Deliveries whose result is awaited at once; past this the oldest is forgotten (a host that never tells). */
const MAX_AWAITED_DELIVERIES = 10_000;
/** A host's failure reason is cut to this: it is listed, and must stay short. */
const MAX_DELIVERY_REASON_CHARS = 200;

/** The journal's word for a reply: words for a person, silence (`NO_REPLY`, a heartbeat's ack), or nothing. */
const JOURNAL_REPLY: Readonly<Record<ReplyKind, JournalReplyKind>> = {
  visible: "text",
  silent: "silent",
  "heartbeat-ack": "silent",
  none: "empty",
};

/** How a turn ended, as a caller waiting for it (`waitForCompletion`) is told. */
export interface RunCompletion {
  status: AgentTurnFinished["status"];
  reply: ReplyKind;
  /** A reply was sent to a channel (`delivery:send`). */
  delivered: boolean;
  /** The reply as the agent gave it; shown to the caller only when the config exposes replies. */
  replyText: string | undefined;
}

/** What a waiting caller gets when the plugin stops before the turn ends: it stopped waiting, not the turn failing. */
const STOPPED: RunCompletion = { status: "error", reply: "none", delivered: false, replyText: undefined };

interface Tracked {
  run: PendingRun;
  deadline: NodeJS.Timeout;
  listeners: RunListeners;
}

/** The summary text of a turn that was running when the gateway died: it is not run again. */
export const INTERRUPTED_TEXT = "interrupted by a restart";

/** Longest run name shown in front of a summary. */
const MAX_NAME_CHARS = 80;

/**
 * The run's name as it stands in its summary line: it may come from the payload (a mapping's `name` template, an
 * `/agent` body), so it is one line and short. It stands inside the wrapper with the rest of the line.
 */
function plainName(name: string): string {
  const line = name.replace(/\s+/g, " ").trim();
  return line.length > MAX_NAME_CHARS ? `${line.slice(0, MAX_NAME_CHARS - 1)}…` : line || "Hook";
}

export class RunCompletionTracker {
  private readonly pending = new Map<string, Tracked>();
  /** Callers waiting for a run's completion, by run id. */
  private readonly waiters = new Map<string, (completion: RunCompletion) => void>();
  private readonly onFinished = (finished: AgentTurnFinished) => this.finish(finished.runId, finished);
  /** Runs whose delivery went out, waiting for the host's `delivery:result`, in the order they went. */
  private readonly deliveries = new Map<string, RunDelivered>();
  private readonly onDeliveryResult = (result: DeliveryResult) => {
    const told = this.deliveries.get(result.runId);
    if (told === undefined) return;
    this.deliveries.delete(result.runId);
    told(
      result.status === "sent"
        ? "sent"
        : `failed: ${(result.reason ?? "no reason given").slice(0, MAX_DELIVERY_REASON_CHARS)}`,
    );
  };
  private listening = false;
  /** Set by stop(), cleared by start(): a caller arriving after the stop is not left waiting for a turn's deadline. */
  private stopped = false;

  constructor(
    private readonly bus: HookBus,
    private readonly logger: HostLogger,
    private readonly mainSessionKey: string,
    private readonly ids: Ids,
    private readonly graceMs: number = DEFAULT_DEADLINE_GRACE_MS,
    private readonly metrics: HookMetrics = NO_METRICS,
  ) {
    metrics.agentTurnsInFlight?.(() => this.pending.size);
  }

  /** Starts listening for finished turns; called by the plugin's service start (and lazily by track). */
  start(): void {
    this.stopped = false;
    if (this.listening) return;
    this.bus.on("session:agent-turn-finished", this.onFinished);
    this.bus.on("delivery:result", this.onDeliveryResult);
    this.listening = true;
  }

  /** Stops listening and forgets pending runs; their summaries are not published after stop. */
  stop(): void {
    this.bus.off("session:agent-turn-finished", this.onFinished);
    this.bus.off("delivery:result", this.onDeliveryResult);
    this.deliveries.clear();
    this.listening = false;
    this.stopped = true;
    for (const { deadline } of this.pending.values()) clearTimeout(deadline);
    this.pending.clear();
    for (const resolve of this.waiters.values()) resolve(STOPPED);
    this.waiters.clear();
  }

  /**
   * Resolves with the run's completion once its summary is published (or with an error when the plugin stops
   * first). Ask before the turn is emitted: a subsystem may answer synchronously.
   */
  completion(runId: string): Promise<RunCompletion> {
    if (this.stopped) return Promise.resolve(STOPPED);
    return new Promise((resolve) => this.waiters.set(runId, resolve));
  }

  /** Number of runs still waiting for an answer. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Must be called before the turn is emitted: a subsystem may answer synchronously. `delivered` hears the
   * delivery's result when the host tells one (`delivery:result`).
   */
  track(run: PendingRun, listeners: RunListeners = {}): void {
    this.start();
    const deadline = setTimeout(
      () => {
        try {
          this.finish(run.runId, {
            source: run.source,
            runId: run.runId,
            status: "timeout",
            error: `no answer within ${run.timeoutSeconds}s`,
          });
        } catch (error) {
          // Nobody else would hear it on a timer: a host listener that throws must not end the host's process.
          this.logger.error(`publishing a timed-out turn's summary failed: ${errorMessage(error)}`, {
            runId: run.runId,
          });
        }
      },
      run.timeoutSeconds * 1000 + this.graceMs,
    );
    // A pending deadline never keeps a stopping host alive; the turn it waits for does.
    deadline.unref();
    this.pending.set(run.runId, { run, deadline, listeners });
  }

  /**
   * Publishes the summary of a turn a previous process handed over and never saw finish: `<name> (error):
   * interrupted by a restart`. The reason is the plugin's own, but the name may be the payload's: the line is
   * wrapped like any other summary of an untrusted run.
   */
  interrupted(run: PendingRun): void {
    this.publish(run, { source: run.source, runId: run.runId, status: "error", error: INTERRUPTED_TEXT });
    this.metrics.turnFinished("interrupted");
  }

  /**
   * Ends a run the host would not start when it left its mapping's queue: published like a failed turn (the sender
   * had its 202 when it was queued).
   */
  notStarted(run: PendingRun, error: string, listeners: RunListeners = {}): void {
    this.track(run, listeners);
    this.finish(run.runId, { source: run.source, runId: run.runId, status: "error", error });
  }

  private finish(runId: string, finished: AgentTurnFinished): void {
    const tracked = this.pending.get(runId);
    if (!tracked) return;
    this.pending.delete(runId);
    clearTimeout(tracked.deadline);
    const { published, delivered: onDelivered, ended } = tracked.listeners;
    const reply = replyKind(finished.reply, finished.replyDisposition);
    let delivered = false;
    try {
      // Awaited before the delivery goes: a host may tell its result while it is being emitted.
      if (onDelivered !== undefined && tracked.run.deliver) this.awaitDelivery(runId, onDelivered);
      delivered = this.publish(tracked.run, finished);
      this.metrics.turnFinished(finished.status);
      published?.(finished.status, finished.status === "ok" ? JOURNAL_REPLY[reply] : undefined);
    } finally {
      // A host listener that threw while the summary went out (the record stays unfinished) does not keep the
      // turn's slot, nor a caller waiting for it.
      if (!delivered) this.deliveries.delete(runId);
      ended?.();
      const waiter = this.waiters.get(runId);
      if (waiter) {
        this.waiters.delete(runId);
        waiter({ status: finished.status, reply, delivered, replyText: finished.reply });
      }
    }
  }

  private awaitDelivery(runId: string, told: RunDelivered): void {
    if (this.deliveries.size >= MAX_AWAITED_DELIVERIES) {
      const oldest = this.deliveries.keys().next().value;
      if (oldest !== undefined) this.deliveries.delete(oldest);
    }
    this.deliveries.set(runId, told);
  }

  /** Publishes the summary, heartbeat and delivery; true when a reply was sent for delivery. */
  private publish(run: PendingRun, finished: AgentTurnFinished): boolean {
    const { runId } = run;
    const source = run.source;
    // The summary is a model's answer to external content (with the echo runner, the content itself), and the
    // run's name may be the payload's too (a `name` template, an `/agent` body): the whole line is wrapped like any
    // payload-derived text, so nothing a sender chose stands outside the wrapper.
    const wrap = run.untrusted;
    const { prefix, text } = summaryParts(wrap ? plainName(run.name) : run.name, finished);
    const line = `${prefix} ${text}`;
    // The run's agent's main session; a record from before agents existed names none (the host's default).
    const agent = run.agentId === undefined ? {} : { agentId: run.agentId };
    this.bus.emit("session:system-event", {
      source,
      sessionKey: this.mainSessionKey,
      ...agent,
      text: wrap ? wrapExternalContent(line, run.contentSource, this.ids.markerId()) : line,
      raw: line,
      untrusted: wrap,
      eventId: `${run.runId}:summary`,
    });
    if (run.wakeMode === "now") {
      this.bus.emit("heartbeat:request", { source, reason: `hook:${run.runId}`, ...agent });
    }
    const reply = run.deliver ? deliverableReply(finished) : undefined;
    if (reply !== undefined) {
      const delivery = { source, runId: run.runId, ...agent, channel: run.channel, text: reply };
      this.bus.emit("delivery:send", run.to === undefined ? delivery : { ...delivery, to: run.to });
    }
    this.logger.debug("agent run finished", {
      runId,
      status: finished.status,
      requestId: source.requestId,
      delivered: reply !== undefined,
    });
    return reply !== undefined;
  }
}

/** @module Waits for each agent run to finish (or for its deadline), then publishes summary, heartbeat and delivery. */
import type { AgentTurnFinished, HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Ids } from "../ids.js";
import { neutraliseMarkers, wrapExternalContent } from "../safety/wrap-external.js";
import type { PendingRun } from "./plan-action.js";
import { deliverableReply, summaryParts } from "./summarize-run.js";

/** Extra time past `timeoutSeconds` before the plugin gives up on the session subsystem's answer. */
export const DEFAULT_DEADLINE_GRACE_MS = 5_000;

/** Told once the run's summary (and heartbeat, delivery) went out, with how the run ended. */
export type RunPublished = (status: AgentTurnFinished["status"] | "interrupted") => void;

interface Tracked {
  run: PendingRun;
  deadline: NodeJS.Timeout;
  onPublished: RunPublished | undefined;
}

/** The summary text of a turn that was running when the gateway died: it is not run again. */
export const INTERRUPTED_TEXT = "interrupted by a restart";

/** Longest run name shown in front of a summary. */
const MAX_NAME_CHARS = 80;

/**
 * The run's name as it stands outside the wrapper: it may come from the payload (a mapping's `name` template),
 * so it is one line, short, and cannot hold a marker.
 */
function plainName(name: string): string {
  const line = neutraliseMarkers(name).replace(/\s+/g, " ").trim();
  return line.length > MAX_NAME_CHARS ? `${line.slice(0, MAX_NAME_CHARS - 1)}…` : line || "Hook";
}

export class RunCompletionTracker {
  private readonly pending = new Map<string, Tracked>();
  private readonly onFinished = (finished: AgentTurnFinished) => this.finish(finished.runId, finished);
  private listening = false;

  constructor(
    private readonly bus: HookBus,
    private readonly logger: HostLogger,
    private readonly mainSessionKey: string,
    private readonly ids: Ids,
    private readonly graceMs: number = DEFAULT_DEADLINE_GRACE_MS,
  ) {}

  /** Starts listening for finished turns; called by the plugin's service start (and lazily by track). */
  start(): void {
    if (this.listening) return;
    this.bus.on("session:agent-turn-finished", this.onFinished);
    this.listening = true;
  }

  /** Stops listening and forgets pending runs; their summaries are not published after stop. */
  stop(): void {
    this.bus.off("session:agent-turn-finished", this.onFinished);
    this.listening = false;
    for (const { deadline } of this.pending.values()) clearTimeout(deadline);
    this.pending.clear();
  }

  /** Number of runs still waiting for an answer. */
  get size(): number {
    return this.pending.size;
  }

  /** Must be called before the turn is emitted: a subsystem may answer synchronously. */
  track(run: PendingRun, onPublished?: RunPublished): void {
    this.start();
    const deadline = setTimeout(
      () => {
        this.finish(run.runId, {
          source: run.source,
          runId: run.runId,
          status: "timeout",
          error: `no answer within ${run.timeoutSeconds}s`,
        });
      },
      run.timeoutSeconds * 1000 + this.graceMs,
    );
    // A pending deadline never keeps a stopping host alive; the turn it waits for does.
    deadline.unref();
    this.pending.set(run.runId, { run, deadline, onPublished });
  }

  /**
   * Publishes the summary of a turn a previous process handed over and never saw finish: `<name> (error):
   * interrupted by a restart`. The text is the plugin's own, so it is not wrapped as external content.
   */
  interrupted(run: PendingRun): void {
    this.publish(
      run,
      { source: run.source, runId: run.runId, status: "error", error: INTERRUPTED_TEXT },
      false,
    );
  }

  private finish(runId: string, finished: AgentTurnFinished): void {
    const tracked = this.pending.get(runId);
    if (!tracked) return;
    this.pending.delete(runId);
    clearTimeout(tracked.deadline);
    this.publish(tracked.run, finished, tracked.run.untrusted);
    tracked.onPublished?.(finished.status);
  }

  private publish(run: PendingRun, finished: AgentTurnFinished, wrap: boolean): void {
    const { runId } = run;
    const source = run.source;
    // The summary is a model's answer to external content (with the echo runner, the content itself): it is
    // wrapped like any payload-derived text, with the run's name outside the wrapper.
    const { prefix, text } = summaryParts(run.untrusted ? plainName(run.name) : run.name, finished);
    const body = wrap ? wrapExternalContent(text, run.contentSource, this.ids.markerId()) : text;
    this.bus.emit("session:system-event", {
      source,
      sessionKey: this.mainSessionKey,
      text: `${prefix} ${body}`,
      raw: `${prefix} ${text}`,
      untrusted: wrap,
      eventId: `${run.runId}:summary`,
    });
    if (run.wakeMode === "now") {
      this.bus.emit("heartbeat:request", { source, reason: `hook:${run.runId}` });
    }
    const reply = run.deliver ? deliverableReply(finished) : undefined;
    if (reply !== undefined) {
      const delivery = { source, runId: run.runId, channel: run.channel, text: reply };
      this.bus.emit("delivery:send", run.to === undefined ? delivery : { ...delivery, to: run.to });
    }
    this.logger.debug("agent run finished", {
      runId,
      status: finished.status,
      requestId: source.requestId,
      delivered: reply !== undefined,
    });
  }
}

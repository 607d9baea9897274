/** @module Runs the plugin's agent turns as OpenClaw subagent runs and reports each one back as `session:agent-turn-finished`. */
import { setTimeout as sleep } from "node:timers/promises";
import type { AgentTurn, AgentTurnFinished, HookBus, HostLogger } from "../index.js";
import type { OpenClawRuntime, OpenClawSubagentRun, OpenClawWaitResult } from "./openclaw-api.js";
import { notAdmitted, turnNotAdmitted } from "./turn-refusal.js";

/** One `waitForRun` call waits at most this long, so a stopping service is never held for a whole turn. */
const WAIT_SLICE_MS = 5_000;
/** Pause before asking again when OpenClaw refuses new runs while it swaps registrations (a config reload). */
const DRAINING_RETRY_MS = 1_000;
/** A wait that comes back early is not asked again at once: OpenClaw's own poller pauses too. */
const MIN_WAIT_GAP_MS = 250;

const isDraining = (error: unknown) => /draining/i.test((error as Error)?.message ?? "");

type Outcome = Omit<AgentTurnFinished, "source" | "runId">;

/** `provider/model` as OpenClaw takes it: two fields. A bare name is a model of the default provider. */
function modelFields(model: string | undefined): { provider?: string; model?: string } {
  if (model === undefined) return {};
  const slash = model.indexOf("/");
  return slash === -1 ? { model } : { provider: model.slice(0, slash), model: model.slice(slash + 1) };
}

function outcomeOf(result: OpenClawWaitResult): Outcome {
  if (result.status === "error") return { status: "error", error: result.error || "the agent run failed" };
  if (result.status === "timeout") {
    return { status: "timeout", error: result.error || "OpenClaw stopped the run at its own time limit" };
  }
  const reply = result.terminalReply;
  // A silent or empty terminal reply comes without text: the summary says "(no reply)", and a waiting caller is told
  // which of the two it was.
  if (reply?.disposition === "visible") return { status: "ok", reply: reply.text };
  return { status: "ok", replyDisposition: reply?.disposition === "silent" ? "silent" : "empty" };
}

/**
 * `pending` is a run still going; so is a bare `timeout`: that is the wait call's own limit running out (OpenClaw
 * 2026.9.6 answers `{ status: "timeout" }` and nothing else). A run that really timed out carries an end time, a
 * stop reason, a liveness state or its phase, as OpenClaw's own terminal test reads it.
 */
function stillRunning(result: OpenClawWaitResult): boolean {
  if (result.status === "pending") return true;
  if (result.status !== "timeout") return false;
  return (
    result.pendingError === true ||
    (result.endedAt === undefined &&
      result.timeoutPhase === undefined &&
      !result.stopReason &&
      !result.livenessState)
  );
}

/** The run as OpenClaw is asked for it, in the session `openClawSessionKey` chose for the turn. */
function runParams(turn: AgentTurn, sessionKey: string): OpenClawSubagentRun {
  return {
    sessionKey,
    message: turn.message,
    deliver: false,
    idempotencyKey: turn.runId,
    ...modelFields(turn.model),
  };
}

/** A key naming an agent's main session itself never gets a hook turn. */
const isMainSession = (scopedKey: string) => /^agent:[^:]+:main$/i.test(scopedKey);

/**
 * The key the run goes to in OpenClaw: scoped to the turn's agent (OpenClaw would scope a plain key to its default
 * agent; an `agent:<id>:` key is re-scoped, as OpenClaw's own hooks do). An isolated turn runs in a session of its own
 * under the key, so a key shared by many turns never accumulates their context; a persistent one in the key's.
 */
export function openClawSessionKey(turn: AgentTurn, defaultAgentId: string): { key: string; scoped: string } {
  const agentId = turn.agentId ?? defaultAgentId;
  const scoped = `agent:${agentId}:${turn.sessionKey.replace(/^agent:[^:]+:/i, "")}`;
  return { scoped, key: turn.sessionMode === "persistent" ? scoped : `${scoped}:run:${turn.runId}` };
}

export class AgentTurns {
  private stopped = false;
  private readonly running = new Set<string>();

  constructor(
    private readonly runtime: OpenClawRuntime,
    private readonly bus: HookBus,
    private readonly logger: HostLogger,
    private readonly defaultAgentId: string,
  ) {}

  /**
   * Has OpenClaw accept the run before the request is answered: resolves with OpenClaw's acceptance, rejects with the
   * host contract's `TurnNotAdmitted`. `start` later asks again with the same idempotency key, which OpenClaw answers
   * with the run it already accepted (its agent dedupe), and waits for it.
   */
  async admit(turn: AgentTurn): Promise<void> {
    if (this.stopped) throw notAdmitted("unavailable", "the plugin's service is stopping");
    const { key: sessionKey, scoped } = openClawSessionKey(turn, this.defaultAgentId);
    // Refused before it is accepted: the sender learns it now, and nothing is recorded as accepted.
    if (isMainSession(scoped)) {
      throw notAdmitted("refused", "a hook's agent turn cannot run in an agent's main session");
    }
    try {
      await this.runtime.subagent.run(runParams(turn, sessionKey));
    } catch (error) {
      throw turnNotAdmitted(error);
    }
  }

  /** Runs the turn in the background; the outcome is emitted on the bus, never thrown. */
  start(turn: AgentTurn): void {
    this.running.add(turn.runId);
    void this.run(turn)
      .catch((error: unknown) => ({
        status: "error" as const,
        error: (error as Error)?.message ?? String(error),
      }))
      .then((outcome) => {
        this.running.delete(turn.runId);
        if (this.stopped) return;
        try {
          this.bus.emit("session:agent-turn-finished", {
            source: turn.source,
            runId: turn.runId,
            ...outcome,
          });
        } catch (error) {
          // A listener that throws while the summary goes out must not become an unhandled rejection in OpenClaw.
          this.logger.error(
            `publishing an agent turn's outcome failed: ${(error as Error)?.message ?? String(error)}`,
            {
              runId: turn.runId,
            },
          );
        }
      });
  }

  /** Stops waiting: turns still running in OpenClaw finish there, and their summaries are not published. */
  stop(): void {
    this.stopped = true;
    if (this.running.size > 0) {
      this.logger.warn(
        "stopped while agent turns were still running in OpenClaw; their summaries will not be published",
        {
          turns: this.running.size,
        },
      );
    }
  }

  private async run(turn: AgentTurn): Promise<Outcome> {
    const { key: sessionKey, scoped } = openClawSessionKey(turn, this.defaultAgentId);
    if (isMainSession(scoped)) {
      return { status: "error", error: "a hook's agent turn cannot run in the main session" };
    }
    if (turn.thinking !== undefined) {
      this.logger.debug(
        "OpenClaw's subagent runs take no thinking level; the turn runs with the agent's own",
        {
          runId: turn.runId,
        },
      );
    }
    const deadline = Date.now() + turn.timeoutSeconds * 1000;
    const { runId } = await this.startRun(turn, sessionKey, deadline);
    while (!this.stopped) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const asked = Date.now();
      const result = await this.retryWhileDraining(deadline, () =>
        this.runtime.subagent.waitForRun({ runId, timeoutMs: Math.min(remaining, WAIT_SLICE_MS) }),
      );
      if (!stillRunning(result)) return outcomeOf(result);
      const gap = MIN_WAIT_GAP_MS - (Date.now() - asked);
      if (gap > 0) await sleep(gap);
    }
    return { status: "timeout", error: `no answer from OpenClaw within ${turn.timeoutSeconds}s` };
  }

  private startRun(turn: AgentTurn, sessionKey: string, deadline: number): Promise<{ runId: string }> {
    // The idempotency key makes this the run `admit` started (or, after a restart, a new one once).
    return this.retryWhileDraining(deadline, () => this.runtime.subagent.run(runParams(turn, sessionKey)));
  }

  /** OpenClaw refuses calls while a reload drains the gateway; the turn was accepted, so the call is made again. */
  private async retryWhileDraining<T>(deadline: number, call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (!isDraining(error) || this.stopped || Date.now() + DRAINING_RETRY_MS >= deadline) throw error;
        await sleep(DRAINING_RETRY_MS);
      }
    }
  }
}

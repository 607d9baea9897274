/** @module Session subsystem: queues system events for the main session and runs agent turns with a runner. */
import type { AgentTurn, AgentTurnFinished, HookBus, SystemEvent } from "../events.js";
import type { GatewayLogger } from "./logger.js";
import type { AgentRunner, RunnerOutput } from "./runners/runner-types.js";
import type { SessionStore } from "./session-store.js";

export interface SessionSubsystemDeps {
  bus: HookBus;
  store: SessionStore;
  runner: AgentRunner;
  logger: GatewayLogger;
  mainSessionKey: string;
  /** The agent of turns that name none (a journal from before agents), whose keys are stored unscoped. */
  defaultAgentId: string;
}

export interface SessionSubsystem {
  /** Turns received and not yet finished. */
  readonly running: number;
  /** Resolves when no turn is running, or after `timeoutMs`; returns whether it went idle. */
  idle(timeoutMs: number): Promise<boolean>;
  /** Stops listening and aborts the turns still running; each still reports `session:agent-turn-finished`. */
  stop(): Promise<void>;
}

class TurnTimeout extends Error {}
class GatewayStopping extends Error {}

/**
 * How a turn is stopped (deadline or gateway stop): a promise for the race, and an AbortSignal made only when the
 * runner asks for one. Building an AbortController per turn was the largest single cost of an echo turn
 * (bench/PROFILE.md); a runner that never reads its signal (echo) never pays for it.
 */
class TurnCancel {
  reason: Error | undefined;
  readonly cancelled: Promise<never>;
  private controller: AbortController | undefined;
  private reject!: (reason: Error) => void;

  constructor() {
    this.cancelled = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
    // Nobody may be racing it yet (a turn queued behind another): never an unhandled rejection.
    this.cancelled.catch(() => undefined);
  }

  signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.reason !== undefined && !this.controller.signal.aborted) this.controller.abort(this.reason);
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.reject(reason);
  }
}

/**
 * Where a turn's conversation is stored. The default agent's keys are stored as they are (state written before
 * agents existed reads the same); another agent's as OpenClaw names them, `agent:<id>:<key>`. A persistent turn
 * continues that conversation; an isolated one (the default) gets `<key>:run:<runId>`, a conversation of its own,
 * as OpenClaw runs it: a key shared by isolated turns orders them but never carries context from one to the next.
 */
export function conversationKey(turn: AgentTurn, defaultAgentId: string): { key: string; shared: string } {
  const agentId = turn.agentId ?? defaultAgentId;
  const shared = agentId === defaultAgentId ? turn.sessionKey : `agent:${agentId}:${turn.sessionKey}`;
  return { shared, key: turn.sessionMode === "persistent" ? shared : `${shared}:run:${turn.runId}` };
}

function roundMs(started: number): number {
  return Math.round(performance.now() - started);
}

export function startSessionSubsystem(deps: SessionSubsystemDeps): SessionSubsystem {
  const { bus, store, runner, logger } = deps;
  const active = new Map<string, { cancel: TurnCancel; done: Promise<void> }>();
  // Turns of one session key (of one agent) run one after the other: a persistent turn sees the reply of the one before.
  const chains = new Map<string, Promise<void>>();
  let idleWaiters: Array<() => void> = [];

  const onSystemEvent = (event: SystemEvent) => {
    const outcome =
      event.sessionKey === deps.mainSessionKey
        ? store.enqueue(event)
        : // Not the main session: the note belongs to that conversation, where its next turn will see it.
          store.appendSystemNote(event);
    // Told at once, from this listener: the plugin's journal puts it on the record's `done` line.
    bus.emit("session:system-event-outcome", { source: event.source, eventId: event.eventId, outcome });
  };

  const finish = (turn: AgentTurn, result: Omit<AgentTurnFinished, "source" | "runId">, started: number) => {
    bus.emit("session:agent-turn-finished", { source: turn.source, runId: turn.runId, ...result });
    // Logged after the event, so the record has the event before the log has the line (and the state commits at
    // the end of this turn, long before the buffered line reaches a reader).
    logger.info("agent turn finished", {
      runId: turn.runId,
      requestId: turn.source.requestId,
      runner: runner.kind,
      status: result.status,
      durationMs: roundMs(started),
    });
  };

  const execute = async (
    turn: AgentTurn,
    key: string,
    cancel: TurnCancel,
    started: number,
  ): Promise<void> => {
    try {
      if (cancel.reason !== undefined) throw cancel.reason;
      const input = {
        turn,
        history: [...store.history(key)],
        get signal() {
          return cancel.signal();
        },
      };
      // The race keeps the deadline even for a runner that ignores its signal.
      const output: RunnerOutput = await Promise.race([runner.run(input), cancel.cancelled]);
      complete(turn, key, output, started);
    } catch (error) {
      if (error instanceof TurnTimeout) finish(turn, { status: "timeout", error: error.message }, started);
      else finish(turn, { status: "error", error: (error as Error)?.message ?? String(error) }, started);
    }
  };

  const complete = (turn: AgentTurn, key: string, output: RunnerOutput, started: number) => {
    store.appendHistory(
      key,
      [
        { role: "user", content: turn.message },
        { role: "assistant", content: output.reply },
      ],
      turn.runId,
    );
    finish(
      turn,
      output.summary === undefined ? { status: "ok", reply: output.reply } : { status: "ok", ...output },
      started,
    );
  };

  const onAgentTurn = (turn: AgentTurn) => {
    const started = performance.now();
    const cancel = new TurnCancel();
    // The clock starts on receipt, as the plugin's own deadline does, even if the turn waits behind another.
    const timer = setTimeout(
      () => cancel.abort(new TurnTimeout(`no reply within ${turn.timeoutSeconds}s`)),
      turn.timeoutSeconds * 1000,
    );
    const { key, shared } = conversationKey(turn, deps.defaultAgentId);
    const previous = chains.get(shared) ?? Promise.resolve();
    // Never rejects: a listener that throws while a turn finishes is logged, and later turns of the key still run.
    const done = previous
      .then(() => execute(turn, key, cancel, started))
      .catch((error: unknown) => {
        logger.error(
          `agent turn ${turn.runId} failed to finish: ${(error as Error)?.message ?? String(error)}`,
        );
      });
    chains.set(shared, done);
    active.set(turn.runId, { cancel, done });
    logger.debug("agent turn started", {
      runId: turn.runId,
      requestId: turn.source.requestId,
      runner: runner.kind,
    });
    void done.finally(() => {
      clearTimeout(timer);
      active.delete(turn.runId);
      if (chains.get(shared) === done) chains.delete(shared);
      if (active.size === 0) {
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const wake of waiters) wake();
      }
    });
  };

  bus.on("session:system-event", onSystemEvent);
  bus.on("session:agent-turn", onAgentTurn);

  return {
    get running() {
      return active.size;
    },
    idle(timeoutMs) {
      if (active.size === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        idleWaiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    async stop() {
      bus.off("session:agent-turn", onAgentTurn);
      const turns = [...active.values()];
      for (const { cancel } of turns) {
        cancel.abort(new GatewayStopping("the gateway stopped before the turn finished"));
      }
      await Promise.all(turns.map(({ done }) => done));
      // Summaries of the aborted turns still arrive as system events; keep taking them until now.
      bus.off("session:system-event", onSystemEvent);
    },
  };
}

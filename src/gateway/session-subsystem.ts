/** @module Session subsystem: queues system events for the main session and runs agent turns with a runner. */
import type { AgentTurn, AgentTurnFinished, HookBus, SystemEvent } from "../events.js";
import type { GatewayLogger } from "./logger.js";
import type { AgentRunner, RunnerOutput } from "./runners/runner-types.js";
import type { SessionStore } from "./session-store.js";
import { GatewayStopping, RunningTurns, TurnCancel, TurnTimeout } from "./session-turns.js";

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

/** Puts a system event where its session's events go, and says on the bus what became of it. */
function storeSystemEvent(deps: SessionSubsystemDeps, event: SystemEvent): void {
  const { store } = deps;
  const outcome =
    event.sessionKey === deps.mainSessionKey
      ? store.enqueue(event)
      : // Not the main session: the note belongs to that conversation, where its next turn will see it.
        store.appendSystemNote(event);
  // Told at once, from this listener: the plugin's journal puts it on the record's `done` line.
  deps.bus.emit("session:system-event-outcome", { source: event.source, eventId: event.eventId, outcome });
}

/** Reports on the bus how a turn ended, then logs it. */
function finishTurn(
  deps: SessionSubsystemDeps,
  turn: AgentTurn,
  result: Omit<AgentTurnFinished, "source" | "runId">,
  started: number,
): void {
  deps.bus.emit("session:agent-turn-finished", { source: turn.source, runId: turn.runId, ...result });
  // Logged after the event, so the record has the event before the log has the line (and the state commits at
  // the end of this turn, long before the buffered line reaches a reader).
  deps.logger.info("agent turn finished", {
    runId: turn.runId,
    requestId: turn.source.requestId,
    runner: deps.runner.kind,
    status: result.status,
    durationMs: roundMs(started),
  });
}

/** Runs one turn of the conversation `key` with the runner, and reports how it ended. */
async function executeTurn(
  deps: SessionSubsystemDeps,
  turn: AgentTurn,
  key: string,
  cancel: TurnCancel,
  started: number,
): Promise<void> {
  try {
    if (cancel.reason !== undefined) throw cancel.reason;
    const input = {
      turn,
      history: [...deps.store.history(key)],
      get signal() {
        return cancel.signal();
      },
    };
    // The race keeps the deadline even for a runner that ignores its signal.
    const output: RunnerOutput = await Promise.race([deps.runner.run(input), cancel.cancelled]);
    completeTurn(deps, turn, key, output, started);
  } catch (error) {
    if (error instanceof TurnTimeout) {
      finishTurn(deps, turn, { status: "timeout", error: error.message }, started);
    } else {
      finishTurn(deps, turn, { status: "error", error: (error as Error)?.message ?? String(error) }, started);
    }
  }
}

/** Adds the exchange to the conversation's history and reports the reply. */
function completeTurn(
  deps: SessionSubsystemDeps,
  turn: AgentTurn,
  key: string,
  output: RunnerOutput,
  started: number,
): void {
  deps.store.appendHistory(
    key,
    [
      { role: "user", content: turn.message },
      { role: "assistant", content: output.reply },
    ],
    turn.runId,
  );
  finishTurn(
    deps,
    turn,
    output.summary === undefined ? { status: "ok", reply: output.reply } : { status: "ok", ...output },
    started,
  );
}

/** Takes a turn: its deadline runs from now, and it runs once its conversation's turns before it are done. */
function startTurn(deps: SessionSubsystemDeps, turns: RunningTurns, turn: AgentTurn): void {
  const { logger } = deps;
  const started = performance.now();
  const cancel = new TurnCancel();
  // The clock starts on receipt, as the plugin's own deadline does, even if the turn waits behind another.
  const timer = setTimeout(
    () => cancel.abort(new TurnTimeout(`no reply within ${turn.timeoutSeconds}s`)),
    turn.timeoutSeconds * 1000,
  );
  const { key, shared } = conversationKey(turn, deps.defaultAgentId);
  // A listener that throws while a turn finishes is logged, and later turns of the key still run.
  const done = turns.add(
    turn.runId,
    shared,
    cancel,
    () => executeTurn(deps, turn, key, cancel, started),
    (error: unknown) => {
      logger.error(
        `agent turn ${turn.runId} failed to finish: ${(error as Error)?.message ?? String(error)}`,
      );
    },
  );
  logger.debug("agent turn started", {
    runId: turn.runId,
    requestId: turn.source.requestId,
    runner: deps.runner.kind,
  });
  void done.finally(() => {
    clearTimeout(timer);
    turns.remove(turn.runId, shared, done);
  });
}

export function startSessionSubsystem(deps: SessionSubsystemDeps): SessionSubsystem {
  const { bus } = deps;
  const turns = new RunningTurns();
  const onSystemEvent = (event: SystemEvent) => storeSystemEvent(deps, event);
  const onAgentTurn = (turn: AgentTurn) => startTurn(deps, turns, turn);

  bus.on("session:system-event", onSystemEvent);
  bus.on("session:agent-turn", onAgentTurn);

  return {
    get running() {
      return turns.size;
    },
    idle: (timeoutMs) => turns.idle(timeoutMs),
    async stop() {
      bus.off("session:agent-turn", onAgentTurn);
      await turns.abortAll(() => new GatewayStopping("the gateway stopped before the turn finished"));
      // Summaries of the aborted turns still arrive as system events; keep taking them until now.
      bus.off("session:system-event", onSystemEvent);
    },
  };
}

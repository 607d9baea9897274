/** @module Session subsystem in-process: turns of one key in order, timeouts, a stop that aborts and still reports. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentTurn, AgentTurnFinished, HookBus } from "../../src/events.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { createEchoRunner } from "../../src/gateway/runners/echo.js";
import type { AgentRunner, RunnerInput } from "../../src/gateway/runners/runner-types.js";
import { createSessionStore, type SessionStore } from "../../src/gateway/session-store.js";
import { type SessionSubsystem, startSessionSubsystem } from "../../src/gateway/session-subsystem.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";

let dir: string;
let state: StateDb;
let store: SessionStore;
let session: SessionSubsystem | undefined;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-session-"));
  state = openStateDb(dir);
  store = createSessionStore(state, undefined);
});
afterEach(async () => {
  await session?.stop();
  session = undefined;
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

let runs = 0;
function turn(
  sessionKey: string,
  message: string,
  timeoutSeconds = 5,
  routing: Pick<AgentTurn, "agentId" | "sessionMode"> = { sessionMode: "persistent" },
): AgentTurn {
  runs++;
  return {
    ...routing,
    source: { hook: "agent", requestId: `r${runs}` },
    runId: `run-${runs}`,
    sessionKey,
    message,
    raw: message,
    untrusted: true,
    name: "Hook",
    timeoutSeconds,
    wakeMode: "now",
    deliver: false,
    channel: "last",
  };
}

function start(runner: AgentRunner) {
  const bus: HookBus = new EventEmitter();
  const finished: AgentTurnFinished[] = [];
  const waiters: Array<() => void> = [];
  bus.on("session:agent-turn-finished", (event) => {
    finished.push(event);
    for (const wake of waiters.splice(0)) wake();
  });
  session = startSessionSubsystem({
    bus,
    store,
    runner,
    logger: silentGatewayLogger,
    mainSessionKey: "main",
    defaultAgentId: "main",
  });
  const until = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => (finished.length >= count ? resolve() : waiters.push(check));
      check();
    });
  return { bus, finished, until, session };
}

/** A runner whose turns end when the test says so; each run sees the history it was given. */
function heldRunner() {
  const pending: Array<{ input: RunnerInput; reply: (text: string) => void }> = [];
  const arrived: Array<() => void> = [];
  const runner: AgentRunner = {
    kind: "held",
    run(input) {
      return new Promise((resolve) => {
        pending.push({ input, reply: (text) => resolve({ reply: text }) });
        for (const wake of arrived.splice(0)) wake();
      });
    },
  };
  const next = () =>
    new Promise<{ input: RunnerInput; reply: (text: string) => void }>((resolve) => {
      const check = () => {
        const first = pending.shift();
        if (first) resolve(first);
        else arrived.push(check);
      };
      check();
    });
  return { runner, next };
}

describe("session subsystem", () => {
  it("runs the turns of one session key one after the other, each seeing the reply before it", async () => {
    const held = heldRunner();
    const { bus, finished, until } = start(held.runner);
    bus.emit("session:agent-turn", turn("hook:a", "first"));
    bus.emit("session:agent-turn", turn("hook:a", "second"));
    bus.emit("session:agent-turn", turn("hook:b", "other key"));
    const first = await held.next();
    const other = await held.next();
    expect([first.input.turn.message, other.input.turn.message]).toEqual(["first", "other key"]);
    other.reply("b done");
    first.reply("a one");
    const second = await held.next();
    expect(second.input.turn.message).toBe("second");
    expect(second.input.history).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "a one" },
    ]);
    second.reply("a two");
    await until(3);
    expect(finished.map((event) => event.reply)).toEqual(["b done", "a one", "a two"]);
  });

  it("isolated turns of one key still run in order but see no history; another agent's persistent key is a conversation of its own", async () => {
    const held = heldRunner();
    const { bus, until } = start(held.runner);
    const isolated = { sessionMode: "isolated" } as const;
    bus.emit("session:agent-turn", turn("hook:i", "first", 5, isolated));
    bus.emit("session:agent-turn", turn("hook:i", "second", 5, isolated));
    const first = await held.next();
    first.reply("one");
    const second = await held.next();
    expect(second.input.turn.message).toBe("second");
    expect(second.input.history).toEqual([]);
    second.reply("two");
    await until(2);
    expect(store.history("hook:i")).toEqual([]);
    expect(store.history(`hook:i:run:${first.input.turn.runId}`)).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "one" },
    ]);

    const ops = { agentId: "ops", sessionMode: "persistent" } as const;
    bus.emit("session:agent-turn", turn("hook:i", "for ops", 5, ops));
    const third = await held.next();
    expect(third.input.history).toEqual([]);
    third.reply("ops here");
    await until(3);
    expect(store.history("agent:ops:hook:i").map((message) => message.content)).toEqual([
      "for ops",
      "ops here",
    ]);
  });

  it("runs an echo turn like any other: running until it ends, so a stop in between finds and reports it", async () => {
    const { bus, finished, until, session } = start(createEchoRunner());
    bus.emit("session:agent-turn", turn("hook:e", "echo me"));
    expect(session.running).toBe(1);
    expect(finished).toEqual([]);
    await until(1);
    expect(finished[0]).toMatchObject({ status: "ok", reply: "echo me" });
    expect(await session.idle(1_000)).toBe(true);

    bus.emit("session:agent-turn", turn("hook:e", "stopped first"));
    await session.stop();
    expect(finished[1]).toMatchObject({
      status: "error",
      error: "the gateway stopped before the turn finished",
    });
  });

  it("reports a turn that outlives its timeout as timeout, even when the runner ignores its signal", async () => {
    const { bus, finished, until } = start({ kind: "stuck", run: () => new Promise(() => undefined) });
    bus.emit("session:agent-turn", turn("hook:t", "never answered", 0.05));
    await until(1);
    expect(finished[0]).toMatchObject({ status: "timeout", error: "no reply within 0.05s" });
  });

  it("on stop aborts the running turns and still reports each one", async () => {
    const aborted: boolean[] = [];
    let started = 0;
    let bothStarted: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      bothStarted = resolve;
    });
    const { bus, finished, session } = start({
      kind: "slow",
      run: ({ signal }) =>
        new Promise((_, reject) => {
          signal.addEventListener("abort", () => {
            aborted.push(true);
            reject(signal.reason);
          });
          if (++started === 2) bothStarted();
        }),
    });
    bus.emit("session:agent-turn", turn("hook:s1", "one"));
    bus.emit("session:agent-turn", turn("hook:s2", "two"));
    await running;
    expect(session.running).toBe(2);
    await session.stop();
    expect(aborted).toEqual([true, true]);
    expect(finished.map((event) => [event.status, event.error])).toEqual([
      ["error", "the gateway stopped before the turn finished"],
      ["error", "the gateway stopped before the turn finished"],
    ]);
  });
});

/** @module The turn-slot stage: a request without agent turns passes unchanged; a turn takes its mapping's slot (a pass on a new context) or is queued past the cap; the host admits only the turns that start now, and its refusal is a StageFailure holding the pass to give back. */
import { describe, expect, it } from "vitest";
import { isHookError } from "../../../src/errors.js";
import type { AgentTurn } from "../../../src/events.js";
import type { AdmitAgentTurn } from "../../../src/pipeline/admit-turns.js";
import { StageFailure } from "../../../src/pipeline/stage.js";
import { createTurnSlotStage } from "../../../src/pipeline/stages/turn-slots.js";
import { TurnGate } from "../../../src/pipeline/turn-gate.js";
import { nextOf, prepare, quiet, resolvedContext, resolverOf, runStage } from "./context.js";

const resolver = resolverOf(prepare());
const TURN = { message: "Summarise the incident", name: "Ops" };
const agentRequest = (requestId: string) =>
  resolvedContext(resolver, TURN, { url: "/hooks/agent", requestId });

function slots(cap: number, admitAgentTurn?: AdmitAgentTurn) {
  const gate = new TurnGate(() => ({ running: cap, waiting: Number.POSITIVE_INFINITY }), quiet);
  return { gate, turnSlots: createTurnSlotStage({ gate, admitAgentTurn, turnAdmissionTimeoutMs: 15_000 }) };
}

describe("the turn-slot stage", () => {
  it("passes a request without agent turns on unchanged, taking no slot", async () => {
    const { gate, turnSlots } = slots(1);
    const wake = await resolvedContext(resolver, { text: "hello" });
    expect(await runStage(turnSlots, wake)).toBe(wake);
    expect(gate.claim((await agentRequest("req-2")).resolution!.plans).queued).toBe(false);
  });

  it("gives an agent turn its slot: a pass on a new context that holds its run", async () => {
    const { turnSlots } = slots(1);
    const ctx = await agentRequest("req-1");
    const next = await nextOf(turnSlots, ctx);
    const runId = ctx.resolution!.plans[0]!.run!.runId;
    expect(next.pass?.holds(runId)).toBe(true);
    expect(next.pass?.queued).toBe(false);
    expect(next.resolution?.body).not.toHaveProperty("queued");
    expect(ctx.pass).toBeUndefined();
  });

  it("with a cap of 1 queues the second turn: its pass holds nothing, and its answer says queued", async () => {
    const { turnSlots } = slots(1);
    await nextOf(turnSlots, await agentRequest("req-1"));
    const second = await agentRequest("req-2");
    const next = await nextOf(turnSlots, second);
    expect(next.pass?.queued).toBe(true);
    expect(next.pass?.holds(second.resolution!.plans[0]!.run!.runId)).toBe(false);
    expect(next.resolution?.body).toMatchObject({ ok: true, queued: true });
  });

  it("frees the slot when the first request's pass is cancelled (refused later): the next turn is not queued", async () => {
    const { turnSlots } = slots(1);
    const first = await nextOf(turnSlots, await agentRequest("req-1"));
    first.pass!.cancel();
    expect((await nextOf(turnSlots, await agentRequest("req-2"))).pass?.queued).toBe(false);
  });

  it("asks the host to admit the turns that start now, never a queued one", async () => {
    const asked: AgentTurn[] = [];
    const { turnSlots } = slots(1, async (turn) => void asked.push(turn));
    const first = await agentRequest("req-1");
    await nextOf(turnSlots, first);
    await nextOf(turnSlots, await agentRequest("req-2"));
    expect(asked.map((turn) => turn.runId)).toEqual([first.resolution!.plans[0]!.run!.runId]);
  });

  it("turns the host's refusal into a StageFailure whose context holds the pass, so the slot can be given back", async () => {
    const { gate, turnSlots } = slots(1, async () => {
      throw Object.assign(new Error("session busy"), { admission: "conflict" });
    });
    const ctx = await agentRequest("req-1");
    let failure: unknown;
    try {
      await runStage(turnSlots, ctx);
    } catch (thrown) {
      failure = thrown;
    }
    if (!(failure instanceof StageFailure)) throw new Error("expected a StageFailure");
    expect(isHookError(failure.error) && [failure.error.code, failure.error.status]).toEqual([
      "SESSION_CONFLICT",
      409,
    ]);
    expect(failure.ctx.pass?.holds(ctx.resolution!.plans[0]!.run!.runId)).toBe(true);
    failure.ctx.pass!.cancel();
    expect(gate.claim((await agentRequest("req-2")).resolution!.plans).queued).toBe(false);
  });
});

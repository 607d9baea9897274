/** @module runStages: each stage gets the context the one before returned; the first Outcome ends the list; a thrown refusal goes to refuse with the last context, a StageFailure with its own; a list without an answer is a programming error. */
import { describe, expect, it } from "vitest";
import { HookError } from "../../../src/errors.js";
import { createRefuse } from "../../../src/pipeline/refuse.js";
import {
  answer,
  type Outcome,
  type RequestContext,
  runStages,
  type Stage,
  StageFailure,
} from "../../../src/pipeline/stage.js";
import { checkDuplicate } from "../../../src/pipeline/stages/dedupe.js";
import { TurnGate } from "../../../src/pipeline/turn-gate.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  admittedContext,
  contextOf,
  jsonOf,
  prepare,
  quiet,
  resolvedContext,
  resolverOf,
} from "./context.js";

const OK = { status: 200, headers: { "X-Request-Id": "req-1" }, body: undefined };

/** A refuse that records what it was given and answers with one fixed outcome, to be recognised. */
function recordingRefuse() {
  const given: Array<{ thrown: unknown; ctx: RequestContext }> = [];
  const refused: Outcome = {
    kind: "outcome",
    claimed: true,
    response: { ...OK, status: 599 },
    ctx: undefined,
  };
  return {
    given,
    refused,
    refuse: async (thrown: unknown, ctx: RequestContext) => {
      given.push({ thrown, ctx });
      return refused;
    },
  };
}

/** Stages that note their names as they run. */
function noting(ran: string[]) {
  const admit: Stage = (ctx) => {
    ran.push("admit");
    return { ...ctx, client: "192.0.2.10" };
  };
  const later: Stage = async (ctx) => {
    ran.push("later");
    return ctx;
  };
  return { admit, later };
}

describe("runStages", () => {
  it("hands each stage the context the one before returned, and stops at the first Outcome", async () => {
    const ran: string[] = [];
    const { admit, later } = noting(ran);
    const seen: RequestContext[] = [];
    const answers: Stage = async (ctx) => {
      ran.push("answers");
      seen.push(ctx);
      return answer(ctx, OK);
    };
    const { refuse, given } = recordingRefuse();
    const start = contextOf();
    const outcome = await runStages([admit, answers, later], start, refuse);
    expect(ran).toEqual(["admit", "answers"]);
    expect(seen[0]).toEqual({ ...start, client: "192.0.2.10" });
    expect(outcome).toEqual({ kind: "outcome", claimed: true, response: OK, ctx: seen[0] });
    expect(given).toEqual([]);
    expect(start.client).toBeUndefined();
  });

  it("sends a thrown refusal to refuse with the context as the stages before it left it, and runs nothing after", async () => {
    const ran: string[] = [];
    const { admit, later } = noting(ran);
    const error = new HookError("NOT_FOUND", "No hook is configured at this path.");
    const throws: Stage = () => {
      throw error;
    };
    const { refuse, given, refused } = recordingRefuse();
    const outcome = await runStages([admit, throws, later], contextOf(), refuse);
    expect(outcome).toBe(refused);
    expect(ran).toEqual(["admit"]);
    expect(given).toHaveLength(1);
    expect(given[0]!.thrown).toBe(error);
    expect(given[0]!.ctx.client).toBe("192.0.2.10");
  });

  it("sends a rejected stage's error to refuse the same way, and the first stage's with the start context", async () => {
    const { refuse, given } = recordingRefuse();
    const start = contextOf();
    const rejects: Stage = async () => {
      throw new Error("boom");
    };
    await runStages([rejects], start, refuse);
    expect(given[0]!.ctx).toBe(start);
    expect((given[0]!.thrown as Error).message).toBe("boom");
  });

  it("sends a StageFailure's own error and context to refuse, not the context before the stage", async () => {
    const ran: string[] = [];
    const { admit } = noting(ran);
    const error = new HookError("RATE_LIMITED", "slow down");
    let learnt: RequestContext | undefined;
    const failsHavingLearnt: Stage = (ctx) => {
      learnt = { ...ctx, notes: { mappingId: "github" } };
      throw new StageFailure(error, learnt);
    };
    const { refuse, given } = recordingRefuse();
    await runStages([admit, failsHavingLearnt], contextOf(), refuse);
    expect(given).toHaveLength(1);
    expect(given[0]!.thrown).toBe(error);
    expect(given[0]!.ctx).toBe(learnt);
    expect(given[0]!.ctx.notes).toEqual({ mappingId: "github" });
  });

  it("rejects a list that ends without an answer, without calling refuse", async () => {
    const { refuse, given } = recordingRefuse();
    const { later } = noting([]);
    await expect(runStages([later], contextOf(), refuse)).rejects.toThrow(
      "the stage list ended without an answer",
    );
    await expect(runStages([], contextOf(), refuse)).rejects.toThrow(
      "the stage list ended without an answer",
    );
    expect(given).toEqual([]);
  });

  it("with the pipeline's refuse, a failure after the claims frees the delivery id and the turn slots of the context it carries", async () => {
    const store = new MemoryStore();
    const duplicates = { store, keepMs: 60_000, logger: quiet };
    const verdict = await checkDuplicate(duplicates, "agent", "d-1");
    if (verdict.kind !== "first") throw new Error("expected a first delivery");
    const gate = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), quiet);
    const resolver = resolverOf(prepare());
    const turn = { message: "Summarise", name: "Ops" };
    const ctx = await resolvedContext(resolver, turn, { url: "/hooks/agent", ticket: verdict.ticket });
    const holds: Stage = (current) => ({ ...current, pass: gate.claim(current.resolution!.plans) });
    const journalDown: Stage = () => {
      throw new HookError("UNAVAILABLE", "The request could not be recorded; retry later.", {
        headers: { "Retry-After": "5" },
      });
    };
    const outcome = await runStages([holds, journalDown], ctx, createRefuse(quiet));
    expect(outcome.response.status).toBe(503);
    expect(outcome.response.headers["Retry-After"]).toBe("5");
    expect(jsonOf(outcome)).toEqual({
      ok: false,
      code: "UNAVAILABLE",
      error: "The request could not be recorded; retry later.",
    });
    expect(outcome.refusal).toEqual({
      code: "UNAVAILABLE",
      reason: "UNAVAILABLE",
      error: "The request could not be recorded; retry later.",
    });
    expect(outcome.ctx?.pass).toBeDefined();
    // The slot is free again, and the sender's retry is a first delivery, not a duplicate in progress.
    expect(
      gate.claim((await resolvedContext(resolver, turn, { url: "/hooks/agent" })).resolution!.plans).queued,
    ).toBe(false);
    expect((await checkDuplicate(duplicates, "agent", "d-1")).kind).toBe("first");
  });

  it("with the pipeline's refuse, a 404 is listed as NO_MAPPING with the context's extra headers on the answer", async () => {
    const notFound: Stage = () => {
      throw new HookError("NOT_FOUND", "No hook is configured at this path.");
    };
    const start = admittedContext({ extra: { Deprecation: "true" } });
    const outcome = await runStages([notFound], start, createRefuse(quiet));
    expect(outcome.response.status).toBe(404);
    expect(outcome.response.headers["Deprecation"]).toBe("true");
    expect(outcome.refusal?.reason).toBe("NO_MAPPING");
    expect(outcome.ctx).toBe(start);
  });
});

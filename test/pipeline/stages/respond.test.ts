/** @module The respond stage: a wake's events are handed over before its answer, which carries eventOutcome when the host tells one and is what its duplicates get; an agent turn is answered first and handed over after, or waited for when the caller asked. */
import { describe, expect, it } from "vitest";
import type { RunCompletion, RunCompletionTracker } from "../../../src/actions/run-completion.js";
import type { Journal, Outcomes, RememberedDelivery } from "../../../src/journal/journal.js";
import { NULL_JOURNAL } from "../../../src/journal/null-journal.js";
import { Admission } from "../../../src/pipeline/admission.js";
import type { HandOff } from "../../../src/pipeline/hand-off.js";
import { CALLER_GONE } from "../../../src/pipeline/request.js";
import type { RequestContext } from "../../../src/pipeline/stage.js";
import { checkDuplicate, type DuplicateDeps } from "../../../src/pipeline/stages/dedupe.js";
import { createRespondStage, jsonResponse } from "../../../src/pipeline/stages/respond.js";
import { TurnGate } from "../../../src/pipeline/turn-gate.js";
import type { TurnPass } from "../../../src/pipeline/turn-pass.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  type ContextInit,
  jsonOf,
  outcomeOf,
  prepare,
  quiet,
  resolvedContext,
  resolverOf,
} from "./context.js";

const prepared = prepare({
  mappings: [
    {
      id: "slash",
      match: { path: "slash" },
      action: "wake",
      textTemplate: "{{text}}",
      response: { body: "On it." },
    },
  ],
});
const resolver = resolverOf(prepared);

interface Handed {
  id: string;
  plans: number;
  pass: TurnPass | undefined;
}

/** The stage with a hand-off that records each call and tells `told` of the events, and a journal noting `responded`. */
function respondWith(options: {
  told?: (eventIds: string[]) => Outcomes;
  handOffFails?: boolean;
  completion?: RunCompletion;
}) {
  const handed: Handed[] = [];
  const responded: Array<[string, number, RememberedDelivery | undefined]> = [];
  const errors: string[] = [];
  const handOff: HandOff = (id, plans, pass) => {
    handed.push({ id, plans: plans.length, pass });
    if (options.handOffFails) throw new Error("a listener threw");
    const eventIds = plans.flatMap((plan) => (plan.response.kind === "wake" ? [plan.response.eventId] : []));
    return options.told?.(eventIds) ?? {};
  };
  const journal: Journal = {
    ...NULL_JOURNAL,
    responded: (id, status, remembered) => void responded.push([id, status, remembered]),
  };
  const tracker = {
    completion: async () =>
      options.completion ?? { status: "ok", reply: "none", delivered: false, replyText: undefined },
  } as unknown as RunCompletionTracker;
  const respond = createRespondStage({
    handOff,
    journal,
    logger: { ...quiet, error: (message: string) => void errors.push(message) },
    admission: new Admission(prepared.config.admission),
    tracker,
    exposeReplies: false,
  });
  return { respond, handed, responded, errors };
}

const duplicates: DuplicateDeps = { store: new MemoryStore(), keepMs: 60_000, logger: quiet };
let deliveries = 0;

/** A context as the journal stage leaves it: resolved, admitted with its JSON answer, with a delivery ticket if asked. */
async function admittedFor(
  body: unknown,
  init: ContextInit = {},
  withTicket = false,
): Promise<RequestContext> {
  const ctx = await resolvedContext(resolver, body, { journalKey: { id: "rec-1" }, ...init });
  const resolution = ctx.resolution!;
  const verdict = withTicket ? await checkDuplicate(duplicates, ctx.hook, `d-${++deliveries}`) : undefined;
  if (verdict !== undefined && verdict.kind !== "first") throw new Error("expected a first delivery");
  const admitted = resolution.reply
    ? {
        status: 200,
        headers: { "Content-Type": "text/plain; charset=utf-8", "X-Request-Id": ctx.requestId },
        body: resolution.reply.body,
      }
    : jsonResponse(resolution.status, resolution.body, ctx.requestId, ctx.extra);
  return Object.freeze({ ...ctx, admitted, admittedAt: 1_700_000_000_000, ticket: verdict?.ticket });
}

const queued = (eventIds: string[]): Outcomes => Object.fromEntries(eventIds.map((id) => [id, "queued"]));

describe("the respond stage, a wake", () => {
  it("hands the events over before answering, and the answer carries the eventOutcome the host told", async () => {
    const { respond, handed } = respondWith({ told: queued });
    const ctx = await admittedFor({ text: "Deploy finished" });
    const outcome = await outcomeOf(respond, ctx);
    expect(handed).toEqual([{ id: "rec-1", plans: 1, pass: undefined }]);
    expect(outcome.after).toBeUndefined();
    const expected = { ...JSON.parse(ctx.admitted!.body!), eventOutcome: "queued" };
    expect(jsonOf(outcome)).toEqual(expected);
    expect(outcome.response.status).toBe(200);
    expect(outcome.response.headers["Content-Length"]).toBe(
      String(Buffer.byteLength(JSON.stringify(expected))),
    );
    expect(outcome.refusal).toBeUndefined();
  });

  it.each(["coalesced", "duplicate"] as const)("says %s when that is what the host told", async (told) => {
    const { respond } = respondWith({ told: (ids) => ({ [ids[0]!]: told }) });
    expect(jsonOf(await outcomeOf(respond, await admittedFor({ text: "hi" })))).toMatchObject({
      eventOutcome: told,
    });
  });

  it("answers the admitted answer itself when the host tells nothing", async () => {
    const { respond, handed, responded } = respondWith({});
    const ctx = await admittedFor({ text: "hi" }, {}, true);
    const outcome = await outcomeOf(respond, ctx);
    expect(handed).toHaveLength(1);
    expect(outcome.response).toBe(ctx.admitted);
    expect(responded).toEqual([]);
  });

  it("remembers the answer with its eventOutcome for duplicates, and tells the journal", async () => {
    const { respond, responded } = respondWith({ told: queued });
    const ctx = await admittedFor({ text: "hi" }, {}, true);
    const outcome = await outcomeOf(respond, ctx);
    const copy = await checkDuplicate(duplicates, "wake", ctx.ticket!.key.slice("delivery:wake:".length));
    expect(copy).toMatchObject({ kind: "duplicate", response: { status: 200, body: outcome.response.body } });
    expect(responded).toEqual([
      [
        "rec-1",
        200,
        {
          key: ctx.ticket!.key,
          response: {
            status: 200,
            contentType: "application/json; charset=utf-8",
            body: outcome.response.body,
          },
          at: 1_700_000_000_000,
        },
      ],
    ]);
  });

  it("answers the admitted answer when handing over fails, logged; the delivery is remembered with it", async () => {
    const { respond, errors } = respondWith({ handOffFails: true });
    const ctx = await admittedFor({ text: "hi" }, {}, true);
    const outcome = await outcomeOf(respond, ctx);
    expect(outcome.response).toBe(ctx.admitted);
    expect(errors).toEqual(["emitting the events failed: INTERNAL: a listener threw"]);
    const copy = await checkDuplicate(duplicates, "wake", ctx.ticket!.key.slice("delivery:wake:".length));
    expect(copy).toMatchObject({ kind: "duplicate", response: { body: ctx.admitted!.body } });
  });

  it("answers a mapping's fixed reply first and hands its events over after: no room for an outcome", async () => {
    const { respond, handed } = respondWith({ told: queued });
    const ctx = await admittedFor({ text: "deploy" }, { url: "/hooks/slash" });
    const outcome = await outcomeOf(respond, ctx);
    expect(outcome.response).toBe(ctx.admitted);
    expect(handed).toEqual([]);
    outcome.after!();
    expect(handed).toHaveLength(1);
  });
});

describe("the respond stage, an agent turn", () => {
  const TURN = { message: "Summarise the incident", name: "Ops" };

  it("answers 202 first, remembered for duplicates, and hands the turn over only after, with its slot", async () => {
    const { respond, handed } = respondWith({});
    const admitted = await admittedFor(TURN, { url: "/hooks/agent" }, true);
    const pass = new TurnGate(() => ({ running: 1, waiting: Number.POSITIVE_INFINITY }), quiet).claim(
      admitted.resolution!.plans,
    );
    const ctx = Object.freeze({ ...admitted, pass });
    const outcome = await outcomeOf(respond, ctx);
    expect(outcome.response).toBe(ctx.admitted);
    expect(outcome.response.status).toBe(202);
    const copy = await checkDuplicate(duplicates, "agent", ctx.ticket!.key.slice("delivery:agent:".length));
    expect(copy).toMatchObject({ kind: "duplicate", response: { status: 202 } });
    expect(handed).toEqual([]);
    outcome.after!();
    expect(handed).toEqual([{ id: "rec-1", plans: 1, pass }]);
  });

  it("holds the answer of a caller that waits until the turn ends, and lists the status it got", async () => {
    const completion: RunCompletion = {
      status: "ok",
      reply: "visible",
      delivered: true,
      replyText: "secret",
    };
    const { respond, handed, responded } = respondWith({ completion });
    const ctx = await admittedFor({ ...TURN, waitForCompletion: true }, { url: "/hooks/agent" });
    const outcome = await outcomeOf(respond, ctx);
    expect(handed).toHaveLength(1);
    expect(outcome.response.status).toBe(200);
    expect(jsonOf(outcome)).toEqual({
      ...JSON.parse(ctx.admitted!.body!),
      status: "ok",
      reply: "visible",
      replyDisposition: "visible",
      delivered: true,
    });
    expect(outcome.waitedFrom).toEqual(expect.any(Number));
    expect(responded).toEqual([["rec-1", 200, undefined]]);
  });

  it("answers at admission a caller that hung up before the wait, the turn handed over after", async () => {
    const { respond, handed, responded } = respondWith({});
    const ctx = await admittedFor({ ...TURN, waitForCompletion: true }, { url: "/hooks/agent" });
    const gone = Object.freeze({ ...ctx, request: { ...ctx.request, hungUp: CALLER_GONE } });
    const outcome = await outcomeOf(respond, gone);
    expect(outcome.response).toBe(ctx.admitted);
    expect(handed).toEqual([]);
    outcome.after!();
    expect(handed).toHaveLength(1);
    expect(responded).toEqual([]);
  });
});

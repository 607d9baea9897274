/** @module The dedupe stage: a delivery id's first request gets a ticket on a new context; a copy of a settled one gets the first answer again with Idempotent-Replay, as a DUPLICATE refusal; a store that cannot say is 503. */
import { describe, expect, it } from "vitest";
import { type HookMetrics, NO_METRICS } from "../../../src/metrics/metrics.js";
import type { PipelineResponse } from "../../../src/pipeline/request.js";
import type { RequestContext } from "../../../src/pipeline/stage.js";
import { createDedupeStage } from "../../../src/pipeline/stages/dedupe.js";
import { MemoryStore } from "../../../src/store/memory.js";
import type { Store } from "../../../src/store/store.js";
import {
  admittedContext,
  type ContextInit,
  GITHUB_SECRET,
  jsonOf,
  nextOf,
  outcomeOf,
  prepare,
  quiet,
  refusalOf,
  runStage,
  verifiersOf,
} from "./context.js";

const FIRST_ANSWER: PipelineResponse = {
  status: 200,
  headers: { "Content-Type": "application/json; charset=utf-8", "X-Request-Id": "first" },
  body: '{"ok":true,"mode":"now","eventId":"e-1"}',
};

function dedupeOn(store: Store = new MemoryStore()) {
  const duplicates: string[] = [];
  const metrics: HookMetrics = { ...NO_METRICS, duplicate: (hook) => void duplicates.push(hook) };
  return {
    dedupe: createDedupeStage({ store, keepMs: 60_000, logger: quiet, metrics }, metrics),
    duplicates,
  };
}

const parsed = (init: ContextInit = {}): RequestContext =>
  admittedContext({
    route: { kind: "wake" },
    identity: { via: "token", viaQuery: false },
    raw: Buffer.from('{"text":"hi"}'),
    text: '{"text":"hi"}',
    body: { text: "hi" },
    ...init,
  });
const keyed = (key: string, init: ContextInit = {}) =>
  parsed({ headers: { "idempotency-key": key }, ...init });

describe("the dedupe stage", () => {
  it("passes on the very context when the request carries no delivery id", async () => {
    const { dedupe } = dedupeOn();
    const ctx = parsed();
    expect(await runStage(dedupe, ctx)).toBe(ctx);
  });

  it("gives the first request of an id a ticket on a new context, keyed by hook and id", async () => {
    const { dedupe } = dedupeOn();
    const ctx = keyed("delivery-1");
    const next = await nextOf(dedupe, ctx);
    expect(next.ticket?.key).toBe("delivery:wake:delivery-1");
    expect(next).toEqual({ ...ctx, ticket: next.ticket });
    expect(ctx.ticket).toBeUndefined();
  });

  it("answers a copy of a settled delivery with the first answer, Idempotent-Replay, as a DUPLICATE refusal", async () => {
    const { dedupe, duplicates } = dedupeOn();
    const first = await nextOf(dedupe, keyed("delivery-1"));
    await first.ticket!.settle(FIRST_ANSWER);
    const copy = keyed("delivery-1", { requestId: "req-2" });
    const outcome = await outcomeOf(dedupe, copy);
    expect(outcome.response).toEqual({
      status: 200,
      headers: {
        "X-Request-Id": "req-2",
        "Idempotent-Replay": "true",
        "Content-Type": "application/json; charset=utf-8",
        "Content-Length": String(FIRST_ANSWER.body!.length),
      },
      body: FIRST_ANSWER.body,
    });
    expect(jsonOf(outcome)).toEqual({ ok: true, mode: "now", eventId: "e-1" });
    expect(outcome.refusal).toEqual({
      code: "DUPLICATE",
      reason: undefined,
      error: undefined,
      delivery: "delivery:wake:delivery-1",
    });
    expect(outcome.ctx).toBe(copy);
    expect(duplicates).toEqual(["wake"]);
  });

  it("holds a copy that arrives while the first is under way until the first is answered", async () => {
    const { dedupe } = dedupeOn();
    const first = await nextOf(dedupe, keyed("delivery-1"));
    const copy = outcomeOf(dedupe, keyed("delivery-1", { requestId: "req-2" }));
    await first.ticket!.settle({ ...FIRST_ANSWER, status: 202 });
    const outcome = await copy;
    expect([outcome.response.status, outcome.response.headers["Idempotent-Replay"]]).toEqual([202, "true"]);
  });

  it("frees the id of a first request that was not accepted: the retry is a first request again", async () => {
    const { dedupe } = dedupeOn();
    const first = await nextOf(dedupe, keyed("delivery-1"));
    await first.ticket!.settle({ ...FIRST_ANSWER, status: 503 });
    const retry = await nextOf(dedupe, keyed("delivery-1", { requestId: "req-2" }));
    expect(retry.ticket?.key).toBe("delivery:wake:delivery-1");
  });

  it("keeps each hook's ids apart", async () => {
    const { dedupe } = dedupeOn();
    await (await nextOf(dedupe, keyed("delivery-1"))).ticket!.settle(FIRST_ANSWER);
    const agent = await nextOf(
      dedupe,
      keyed("delivery-1", { url: "/hooks/agent", route: { kind: "agent" } }),
    );
    expect(agent.ticket?.key).toBe("delivery:agent:delivery-1");
  });

  it("refuses a malformed Idempotency-Key: 400 INVALID_PAYLOAD", async () => {
    const { dedupe } = dedupeOn();
    const refused = await refusalOf(dedupe, keyed("x".repeat(257)));
    expect([refused.code, refused.status]).toEqual(["INVALID_PAYLOAD", 400]);
  });

  it("knows a delivery its signature let in by its signed body, not by the unsigned id header", async () => {
    const verifier = verifiersOf(
      prepare({
        mappings: [
          {
            id: "github",
            match: { path: "github" },
            verify: { scheme: "github", secret: GITHUB_SECRET },
            action: "wake",
            textTemplate: "x",
          },
        ],
      }),
    ).forHook("github");
    const { dedupe } = dedupeOn();
    const signed = (delivery: string, requestId: string) =>
      parsed({
        url: "/hooks/github",
        verifier,
        identity: { via: "signature", viaQuery: false },
        headers: { "x-github-delivery": delivery },
        requestId,
      });
    await (await nextOf(dedupe, signed("guid-1", "req-1"))).ticket!.settle(FIRST_ANSWER);
    const resent = await outcomeOf(dedupe, signed("guid-2", "req-2"));
    expect(resent.refusal?.code).toBe("DUPLICATE");
  });

  it("refuses while the first request is still in progress past the wait: 409 with Retry-After", async () => {
    const busy = Object.assign(Object.create(new MemoryStore()) as MemoryStore, {
      claimDelivery: async () => ({ state: "in-progress" as const }),
    });
    const refused = await refusalOf(dedupeOn(busy).dedupe, keyed("delivery-1"));
    expect([refused.code, refused.status, refused.headers]).toEqual([
      "DUPLICATE_IN_PROGRESS",
      409,
      { "Retry-After": "5" },
    ]);
  });

  it("refuses when the store cannot say: 503 UNAVAILABLE, never a second acceptance", async () => {
    const down = Object.assign(Object.create(new MemoryStore()) as MemoryStore, {
      claimDelivery: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    });
    const refused = await refusalOf(dedupeOn(down).dedupe, keyed("delivery-1"));
    expect([refused.code, refused.status, refused.headers]).toEqual([
      "UNAVAILABLE",
      503,
      { "Retry-After": "5" },
    ]);
  });
});

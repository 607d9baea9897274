/** @module The resolve stage: a body turned into a resolution (a wake's plan, an agent turn's, a mapping's) on a new context; a failure is a StageFailure whose context keeps what resolving learnt (the owning mapping, its trace, the view). */
import { describe, expect, it } from "vitest";
import { isHookError } from "../../../src/errors.js";
import { NO_METRICS } from "../../../src/metrics/metrics.js";
import { createRateLimiter } from "../../../src/pipeline/rate-limit.js";
import { type RequestContext, StageFailure } from "../../../src/pipeline/stage.js";
import { createResolveStage } from "../../../src/pipeline/stages/resolve.js";
import { CREDENTIAL_HEADERS } from "../../../src/safety/credentials.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  admittedContext,
  type ContextInit,
  clockAt,
  nextOf,
  prepare,
  quiet,
  resolverOf,
  runStage,
  TOKEN,
} from "./context.js";

const prepared = prepare({
  mappings: [
    {
      id: "ci",
      match: { path: "ci", source: "github" },
      action: "wake",
      textTemplate: "{{action}} #{{number}} by {{headers.x-actor}}",
    },
    {
      id: "limited",
      match: { path: "limited" },
      action: "wake",
      textTemplate: "x",
      rateLimit: { requests: 1, perSeconds: 60 },
    },
    {
      id: "transformed",
      match: { path: "transformed" },
      action: "wake",
      transform: { module: "missing.js", isolate: "inline" },
    },
  ],
});

function resolveStage() {
  const clock = clockAt();
  const resolver = resolverOf(prepared);
  const rateLimiter = createRateLimiter({
    store: new MemoryStore(clock),
    clock,
    logger: quiet,
    metrics: NO_METRICS,
  });
  return {
    resolve: createResolveStage({ resolver, credentialHeaders: CREDENTIAL_HEADERS, rateLimiter }),
    resolver,
  };
}

/** A context as parse leaves it, its route claimed for its name. */
function parsedFor(hook: string, body: unknown, init: ContextInit = {}): RequestContext {
  const text = JSON.stringify(body);
  const route = resolverOf(prepared).route(hook);
  if (route === undefined) throw new Error(`nothing claims ${hook}`);
  return admittedContext({
    url: `/hooks/${hook}`,
    route,
    identity: { via: "token", viaQuery: false },
    bodyKind: "json",
    maxBytes: 1_000,
    raw: Buffer.from(text),
    text,
    body,
    ...init,
  });
}

/** The StageFailure a stage throws; fails when it throws anything else or nothing. */
async function stageFailureOf(promise: Promise<unknown>): Promise<StageFailure> {
  try {
    await promise;
  } catch (thrown) {
    if (thrown instanceof StageFailure) return thrown;
    throw thrown;
  }
  throw new Error("the stage did not fail");
}

describe("the resolve stage", () => {
  it("plans a direct wake: 200 with its event id, one system event and a heartbeat, no view built", async () => {
    const { resolve } = resolveStage();
    const ctx = parsedFor("wake", { text: "Deploy finished", mode: "now" });
    const next = await nextOf(resolve, ctx);
    const resolution = next.resolution!;
    const [plan] = resolution.plans;
    expect(resolution.status).toBe(200);
    expect(resolution.body).toEqual({
      ok: true,
      mode: "now",
      eventId: plan!.response.kind === "wake" && plan!.response.eventId,
    });
    expect(plan!.events.map((planned) => planned.event)).toEqual([
      "session:system-event",
      "heartbeat:request",
    ]);
    expect(plan!.run).toBeUndefined();
    expect(resolution.awaitRun).toBeUndefined();
    expect([next.view, next.notes]).toEqual([undefined, {}]);
    expect(ctx.resolution).toBeUndefined();
  });

  it("plans a direct agent turn: 202 with its run, which the answer waits for when asked to", async () => {
    const { resolve } = resolveStage();
    const next = await nextOf(
      resolve,
      parsedFor("agent", { message: "Summarise the incident", name: "Ops", waitForCompletion: true }),
    );
    const resolution = next.resolution!;
    const run = resolution.plans[0]!.run!;
    expect(resolution.status).toBe(202);
    expect(resolution.body).toEqual({
      ok: true,
      runId: run.runId,
      sessionKey: expect.stringMatching(/^hook:/),
    });
    expect(resolution.awaitRun).toBe(run);
  });

  it("refuses an invalid direct body 400 as a StageFailure carrying the context as far as it got", async () => {
    const { resolve } = resolveStage();
    const ctx = parsedFor("wake", { mode: "now" });
    const failure = await stageFailureOf(runStage(resolve, ctx));
    expect(isHookError(failure.error) && [failure.error.code, failure.error.status]).toEqual([
      "INVALID_PAYLOAD",
      400,
    ]);
    expect(failure.ctx).toEqual({ ...ctx, view: undefined, notes: {} });
  });

  it("resolves a mapping on the request without its credentials, and notes the mapping and its trace", async () => {
    const { resolve } = resolveStage();
    const ctx = parsedFor(
      "ci",
      { source: "github", action: "opened", number: 7 },
      {
        url: `/hooks/ci?token=${TOKEN}&branch=main`,
        headers: { authorization: `Bearer ${TOKEN}`, "x-actor": "octocat" },
      },
    );
    const next = await nextOf(resolve, ctx);
    expect(next.view).toEqual({
      headers: { "x-actor": "octocat" },
      query: { branch: "main" },
      url: "/hooks/ci?branch=main",
    });
    expect(next.resolution).toMatchObject({
      status: 200,
      mappingId: "ci",
      body: { ok: true, mode: "now", mappingId: "ci" },
    });
    const event = next.resolution!.plans[0]!.events[0]!;
    expect(event.event === "session:system-event" && event.payload.raw).toBe("opened #7 by octocat");
    expect(next.notes).toMatchObject({ mappingId: "ci", trace: { mappingId: "ci" } });
  });

  it("keeps the trace of a body no mapping matches in the failure's context: 404, no owner", async () => {
    const { resolve } = resolveStage();
    const failure = await stageFailureOf(runStage(resolve, parsedFor("ci", { source: "gitlab" })));
    expect(isHookError(failure.error) && failure.error.code).toBe("NOT_FOUND");
    expect(failure.ctx.notes?.mappingId).toBeUndefined();
    expect(failure.ctx.notes?.trace?.candidates).toEqual([
      { id: "ci", matched: false, reason: 'payload source is "gitlab", mapping wants "github"' },
    ]);
    expect(failure.ctx.resolution).toBeUndefined();
  });

  it("keeps the owning mapping of a request its rate limit refuses: 429, the mapping and view noted", async () => {
    const { resolve } = resolveStage();
    await nextOf(resolve, parsedFor("limited", {}));
    const failure = await stageFailureOf(runStage(resolve, parsedFor("limited", {})));
    expect(isHookError(failure.error) && [failure.error.code, failure.error.status]).toEqual([
      "RATE_LIMITED",
      429,
    ]);
    expect(failure.ctx.notes?.mappingId).toBe("limited");
    expect(failure.ctx.view?.url).toBe("/hooks/limited");
  });

  it("keeps the owning mapping of a transform that fails: 500 MAPPING_FAILED, the mapping noted", async () => {
    const { resolve } = resolveStage();
    const failure = await stageFailureOf(runStage(resolve, parsedFor("transformed", { any: 1 })));
    expect(isHookError(failure.error) && [failure.error.code, failure.error.status]).toEqual([
      "MAPPING_FAILED",
      500,
    ]);
    expect(failure.ctx.notes).toMatchObject({
      mappingId: "transformed",
      trace: { mappingId: "transformed" },
    });
  });
});

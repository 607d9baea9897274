/** @module The rate-limit stages of /wake and /agent: an authenticated request is counted once, before its body when it cannot carry a delivery id, else after the duplicate check; past the limit, 429. */
import { describe, expect, it } from "vitest";
import type { RateLimit } from "../../../src/config/limits-schema.js";
import { NO_METRICS } from "../../../src/metrics/metrics.js";
import { createRateLimiter, type RateLimited, type RateLimiter } from "../../../src/pipeline/rate-limit.js";
import type { RequestContext } from "../../../src/pipeline/stage.js";
import { createLimitStage } from "../../../src/pipeline/stages/limit.js";
import type { HookRoute } from "../../../src/pipeline/stages/resolve.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  admittedContext,
  type ContextInit,
  clockAt,
  nextOf,
  prepare,
  quiet,
  refusalOf,
  resolverOf,
  runStage,
} from "./context.js";

const TWO_A_MINUTE: RateLimit = { requests: 2, perSeconds: 60, per: "client" };

/** Both limit stages on one real limiter, and every request it was asked to count. */
function limits(
  directRateLimits: Record<"wake" | "agent", RateLimit | undefined> = {
    wake: TWO_A_MINUTE,
    agent: undefined,
  },
) {
  const clock = clockAt();
  const real = createRateLimiter({
    store: new MemoryStore(clock),
    clock,
    logger: quiet,
    metrics: NO_METRICS,
  });
  const counted: RateLimited[] = [];
  const rateLimiter: RateLimiter = (request) => {
    counted.push(request);
    return real(request);
  };
  const deps = { rateLimiter, directRateLimits };
  return { early: createLimitStage(deps, true), late: createLimitStage(deps, false), counted };
}

const onRoute = (hook: "wake" | "agent", init: ContextInit = {}): RequestContext =>
  admittedContext({
    url: `/hooks/${hook}`,
    route: { kind: hook },
    identity: { via: "token", viaQuery: false },
    ...init,
  });

describe("the rate-limit stages", () => {
  it("are named for where they stand in the list", () => {
    const { early, late } = limits();
    expect([early.name, late.name]).toEqual(["limitBeforeBody", "limit"]);
  });

  it("count a request without a delivery id before its body, and once only", async () => {
    const { early, late, counted } = limits();
    const ctx = onRoute("wake");
    const before = await nextOf(early, ctx);
    expect(before).toEqual({ ...ctx, counted: true });
    expect(ctx.counted).toBeUndefined();
    expect(await runStage(late, before)).toBe(before);
    expect(counted).toEqual([
      { rule: TWO_A_MINUTE, owner: { kind: "wake" }, hook: "wake", client: "192.0.2.10", requestId: "req-1" },
    ]);
  });

  it("before the body skip a request with an Idempotency-Key: it is counted after the duplicate check", async () => {
    const { early, late, counted } = limits();
    const ctx = onRoute("wake", { headers: { "idempotency-key": "delivery-1" } });
    expect(await runStage(early, ctx)).toBe(ctx);
    expect(counted).toEqual([]);
    const after = await nextOf(late, ctx);
    expect(after.counted).toBe(true);
    expect(counted).toHaveLength(1);
  });

  it("refuse the request past the limit: 429 RATE_LIMITED with Retry-After, per client address", async () => {
    const { early } = limits();
    await nextOf(early, onRoute("wake"));
    await nextOf(early, onRoute("wake"));
    const refused = await refusalOf(early, onRoute("wake"));
    expect([refused.code, refused.status, refused.headers]).toEqual([
      "RATE_LIMITED",
      429,
      { "Retry-After": "60" },
    ]);
    expect(refused.message).toBe(
      "This hook accepts at most 2 requests per 60 s from one address; retry in 60 s.",
    );
    const other = await nextOf(early, onRoute("wake", { client: "198.51.100.4", address: "198.51.100.4" }));
    expect(other.counted).toBe(true);
  });

  it("leave a route without a limit, and a mapped route (it counts its own), as they are", async () => {
    const { early, late, counted } = limits();
    const agent = onRoute("agent");
    expect(await runStage(early, agent)).toBe(agent);
    expect(await runStage(late, agent)).toBe(agent);
    const route = resolverOf(
      prepare({ mappings: [{ id: "m", match: { path: "m" }, action: "wake", textTemplate: "x" }] }),
    ).route("m") as HookRoute;
    const mapped = admittedContext({ url: "/hooks/m", route });
    expect(await runStage(early, mapped)).toBe(mapped);
    expect(await runStage(late, mapped)).toBe(mapped);
    expect(counted).toEqual([]);
  });

  it("count /agent under its own limit, apart from /wake's", async () => {
    const { early, counted } = limits({
      wake: TWO_A_MINUTE,
      agent: { requests: 1, perSeconds: 10, per: "hook" },
    });
    await nextOf(early, onRoute("agent"));
    const refused = await refusalOf(early, onRoute("agent", { client: "198.51.100.4" }));
    expect(refused.message).toBe("This hook accepts at most 1 request per 10 s; retry in 10 s.");
    expect((await nextOf(early, onRoute("wake"))).counted).toBe(true);
    expect(counted.map((request) => request.owner)).toEqual([
      { kind: "agent" },
      { kind: "agent" },
      { kind: "wake" },
    ]);
  });
});

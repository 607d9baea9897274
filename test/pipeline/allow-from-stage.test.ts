/** @module The allow-list stage: a guarded hook refuses an address not on its list with 403 SOURCE_NOT_ALLOWED, and passes anything else on unchanged. */
import { describe, expect, it } from "vitest";
import { HookError, isHookError } from "../../src/errors.js";
import { createAllowLists } from "../../src/pipeline/allow-lists.js";
import type { RequestContext } from "../../src/pipeline/stage.js";
import { createAllowFromStage } from "../../src/pipeline/stages/allow-from.js";
import { prepareHooks } from "../../src/prepare-hooks.js";

const TOKEN = "allow-from-stage-token-0123456789abcdef";

/** A context as the stages before this one leave it: the hook named, the address found (admit). */
function contextFor(hook: string, address: string | undefined): RequestContext {
  // The stage reads only these two fields; the rest is what the route and admit stages put there.
  return { hook, address, client: address, requestId: "req-1" } as unknown as RequestContext;
}

const stageOf = (hooks: Record<string, unknown>) => {
  const { prepared, issues } = prepareHooks(
    { hooks: { enabled: true, token: TOKEN, ...hooks } },
    { configDir: "/etc/gateway" },
  );
  expect(issues).toEqual([]);
  return createAllowFromStage(createAllowLists(prepared!) ?? (() => undefined));
};

/** What the stage made of a context: the same context, or the refusal it threw. */
function run(
  stage: ReturnType<typeof createAllowFromStage>,
  ctx: RequestContext,
): RequestContext | HookError {
  try {
    return stage(ctx) as RequestContext;
  } catch (error) {
    if (isHookError(error)) return error;
    throw error;
  }
}

describe("the allow-from stage", () => {
  const stage = stageOf({
    limits: { wake: { allowFrom: ["192.0.2.0/24"] } },
    mappings: [{ id: "gh", match: { path: "gh" }, action: "wake", textTemplate: "x", allowFrom: ["github"] }],
  });

  it("passes an address on the list, the context unchanged", () => {
    const ctx = contextFor("wake", "192.0.2.44");
    expect(run(stage, ctx)).toBe(ctx);
    const github = contextFor("gh", "140.82.115.9");
    expect(run(stage, github)).toBe(github);
  });

  it("refuses an address off the list: 403 SOURCE_NOT_ALLOWED, saying nothing of the list", () => {
    const refused = run(stage, contextFor("gh", "192.0.2.44"));
    expect(refused).toBeInstanceOf(HookError);
    expect((refused as HookError).status).toBe(403);
    expect((refused as HookError).toJSON()).toEqual({
      ok: false,
      code: "SOURCE_NOT_ALLOWED",
      error: "This hook does not accept requests from this address.",
    });
    expect((run(stage, contextFor("wake", "::ffff:198.51.100.1")) as HookError).code).toBe(
      "SOURCE_NOT_ALLOWED",
    );
  });

  it("judges the exact address, not the /64 budgets are counted against", () => {
    const exact = stageOf({ limits: { agent: { allowFrom: ["2001:db8::1"] } } });
    const ctx = contextFor("agent", "2001:db8::1");
    expect(run(exact, ctx)).toBe(ctx);
    expect((run(exact, contextFor("agent", "2001:db8::2")) as HookError).code).toBe("SOURCE_NOT_ALLOWED");
  });

  it("refuses an address the adapter could not learn (`unknown`) on a guarded hook", () => {
    expect((run(stage, contextFor("wake", "unknown")) as HookError).code).toBe("SOURCE_NOT_ALLOWED");
  });

  it("leaves an unguarded hook alone, whatever its address", () => {
    const ctx = contextFor("agent", "203.0.113.9");
    expect(run(stage, ctx)).toBe(ctx);
    const any = contextFor("agent", undefined);
    expect(run(stage, any)).toBe(any);
  });

  it("placed before the stage that finds the address, it says so instead of refusing everyone", () => {
    expect(() => stage(contextFor("wake", undefined))).toThrow(/stage order: the client address/);
  });
});

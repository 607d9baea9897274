/** @module The claim stage: wake, agent or the mapping that claims the name set as the route on a new context; nothing claims it: 404; a route set already (a signed path's) is kept. */
import { describe, expect, it } from "vitest";
import { createClaimStage } from "../../../src/pipeline/stages/claim.js";
import { admittedContext, nextOf, prepare, refusalOf, resolverOf, runStage } from "./context.js";

const claim = createClaimStage(
  resolverOf(
    prepare({
      mappings: [{ id: "github", match: { path: "github" }, action: "wake", textTemplate: "{{action}}" }],
    }),
  ),
);

describe("the claim stage", () => {
  it.each(["wake", "agent"] as const)("routes /hooks/%s to itself, on a new context", async (hook) => {
    const ctx = admittedContext({ url: `/hooks/${hook}` });
    const next = await nextOf(claim, ctx);
    expect(next).toEqual({ ...ctx, route: { kind: hook } });
    expect(ctx.route).toBeUndefined();
  });

  it("routes a mapped name to the mappings that may own it", async () => {
    const next = await nextOf(claim, admittedContext({ url: "/hooks/github" }));
    expect(next.route).toEqual({
      kind: "mapped",
      claim: expect.objectContaining({
        hook: "github",
        candidates: [expect.objectContaining({ id: "github" })],
      }),
    });
  });

  it.each(["/hooks/gitlab", "/hooks", "/hooks/wake/extra", "/hooks/wak%65"])(
    "refuses %s, which nothing claims: 404 NOT_FOUND",
    async (url) => {
      const refused = await refusalOf(claim, admittedContext({ url }));
      expect([refused.code, refused.status, refused.message]).toEqual([
        "NOT_FOUND",
        404,
        "No hook is configured at this path.",
      ]);
    },
  );

  it("keeps a route already set (a signed path claimed to read its body), whatever the name would claim now", async () => {
    const ctx = admittedContext({ url: "/hooks/gitlab", route: { kind: "agent" } });
    expect(await runStage(claim, ctx)).toBe(ctx);
  });

  it("lets a mapping without a path claim every other name", async () => {
    const catchAll = createClaimStage(
      resolverOf(prepare({ mappings: [{ id: "any", action: "wake", textTemplate: "x" }] })),
    );
    const next = await nextOf(catchAll, admittedContext({ url: "/hooks/anything/at/all" }));
    expect(next.route?.kind).toBe("mapped");
    expect((await refusalOf(catchAll, admittedContext({ url: "/hooks" }))).status).toBe(404);
  });
});

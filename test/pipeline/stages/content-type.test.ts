/** @module The content-type stage: the body's kind and its route's limit set on a new context before a byte is read; 415 for a type it cannot read, 413 for a declared length over the limit. */
import { describe, expect, it } from "vitest";
import { createContentTypeStage } from "../../../src/pipeline/stages/content-type.js";
import type { HookRoute } from "../../../src/pipeline/stages/resolve.js";
import { admittedContext, nextOf, prepare, refusalOf, resolverOf, runStage, watchedBody } from "./context.js";

const prepared = prepare({
  maxBodyBytes: 1_000,
  mappings: [{ id: "big", match: { path: "big" }, action: "wake", textTemplate: "x", maxBodyBytes: 5_000 }],
});
const resolver = resolverOf(prepared);
const contentType = createContentTypeStage(resolver);
const WAKE: HookRoute = { kind: "wake" };

const routed = (headers: Record<string, string>, route: HookRoute = WAKE) =>
  admittedContext({ headers, route, identity: { via: "token", viaQuery: false } });

describe("the content-type stage", () => {
  it.each([
    [undefined, "json"],
    ["application/json", "json"],
    ["Application/JSON; charset=utf-8", "json"],
    ["application/vnd.github+json", "json"],
    ["application/x-www-form-urlencoded", "form"],
  ])("reads Content-Type %s as %s, with the route's limit", async (type, kind) => {
    const ctx = routed(type === undefined ? {} : { "content-type": type });
    const next = await nextOf(contentType, ctx);
    expect(next).toEqual({ ...ctx, bodyKind: kind, maxBytes: 1_000 });
  });

  it("refuses a type it cannot read: 415 UNSUPPORTED_MEDIA_TYPE naming it", async () => {
    const refused = await refusalOf(contentType, routed({ "content-type": "text/xml; charset=utf-8" }));
    expect([refused.code, refused.status]).toEqual(["UNSUPPORTED_MEDIA_TYPE", 415]);
    expect(refused.message).toContain("Content-Type text/xml is not accepted");
  });

  it("refuses a declared length over the route's limit 413 without reading the body", async () => {
    const body = watchedBody("{}");
    const ctx = admittedContext({ headers: { "content-length": "1001" }, route: WAKE, sent: body });
    const refused = await refusalOf(contentType, ctx);
    expect([refused.code, refused.status]).toEqual(["PAYLOAD_TOO_LARGE", 413]);
    expect(refused.message).toBe("The body is larger than the 1000-byte limit for this hook.");
    expect(body.pulled()).toBe(false);
    expect((await nextOf(contentType, routed({ "content-length": "1000" }))).maxBytes).toBe(1_000);
  });

  it("takes a mapping's own larger limit on its path", async () => {
    const route = resolver.route("big")!;
    const next = await nextOf(contentType, routed({ "content-length": "4000" }, route));
    expect(next.maxBytes).toBe(5_000);
    expect((await refusalOf(contentType, routed({ "content-length": "5001" }, route))).status).toBe(413);
  });

  it("leaves a signed body, read and judged already, as it is", async () => {
    const ctx = admittedContext({
      headers: { "content-type": "text/xml" },
      route: WAKE,
      raw: Buffer.from("{}"),
      bodyKind: "json",
      maxBytes: 1_000,
    });
    expect(await runStage(contentType, ctx)).toBe(ctx);
  });

  it("placed before the claim, says the stage order is wrong", async () => {
    await expect(Promise.resolve(admittedContext()).then(contentType)).rejects.toThrow(
      /stage order: the route is not known yet/,
    );
  });
});

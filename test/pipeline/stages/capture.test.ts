/** @module The capture stages (`hooks serve --capture`): an authenticated request's bytes handed over without credentials, a claimed one after its body with its view set, an unclaimed one read before its 404; a failing capture fails nothing. */
import { describe, expect, it } from "vitest";
import type { CapturedRequest } from "../../../src/pipeline/request.js";
import { createCaptureStage, createCaptureUnclaimedStage } from "../../../src/pipeline/stages/capture.js";
import { CREDENTIAL_HEADERS } from "../../../src/safety/credentials.js";
import { admittedContext, nextOf, prepare, resolverOf, runStage, TOKEN, watchedBody } from "./context.js";

const resolver = resolverOf(
  prepare({ mappings: [{ id: "m", match: { path: "m" }, action: "wake", textTemplate: "x" }] }),
);

function capturing(fails = false) {
  const captured: CapturedRequest[] = [];
  const warnings: string[] = [];
  const deps = {
    capture: (request: CapturedRequest) => {
      if (fails) throw new Error("disk full");
      captured.push(request);
    },
    credentialHeaders: CREDENTIAL_HEADERS,
    logger: { debug() {}, info() {}, error() {}, warn: (message: string) => void warnings.push(message) },
    resolver,
    bodyTimeoutMs: 30_000,
  };
  return {
    capture: createCaptureStage(deps),
    unclaimed: createCaptureUnclaimedStage(deps),
    captured,
    warnings,
  };
}

const BODY = '{"text":"hi"}';
const HEADERS = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-custom": "kept" };

describe("the capture stage (after the body)", () => {
  it("hands the bytes over without credentials, and sets the view it made on a new context", async () => {
    const { capture, captured } = capturing();
    const ctx = admittedContext({
      url: `/hooks/wake?token=${TOKEN}&source=ci`,
      headers: HEADERS,
      route: { kind: "wake" },
      identity: { via: "token", viaQuery: true },
      raw: Buffer.from(BODY),
    });
    const next = await nextOf(capture, ctx);
    expect(captured).toEqual([
      {
        requestId: "req-1",
        method: "POST",
        hook: "wake",
        headers: { "content-type": "application/json", "x-custom": "kept" },
        query: { source: "ci" },
        rawBody: Buffer.from(BODY),
      },
    ]);
    expect(next.view).toEqual({
      headers: { "content-type": "application/json", "x-custom": "kept" },
      query: { source: "ci" },
      url: "/hooks/wake?source=ci",
    });
    expect(JSON.stringify(next.view)).not.toContain(TOKEN);
    expect(ctx.view).toBeUndefined();
  });

  it("logs a capture that throws and passes the request on", async () => {
    const { capture, warnings } = capturing(true);
    const next = await nextOf(capture, admittedContext({ route: { kind: "wake" }, raw: Buffer.from(BODY) }));
    expect(next.view).toBeDefined();
    expect(warnings).toEqual(["request capture failed: disk full"]);
  });
});

describe("the capture stage before the claim", () => {
  it("reads and hands over an authenticated request to a name nothing claims, and passes the context on as it came", async () => {
    const { unclaimed, captured } = capturing();
    const ctx = admittedContext({
      url: "/hooks/new-sender",
      headers: HEADERS,
      identity: { via: "token", viaQuery: false },
      sent: BODY,
    });
    expect(await runStage(unclaimed, ctx)).toBe(ctx);
    expect(captured).toEqual([expect.objectContaining({ hook: "new-sender", rawBody: Buffer.from(BODY) })]);
    expect(captured[0]!.headers).not.toHaveProperty("authorization");
  });

  it("reads nothing of a claimed name, nor of a request without an identity", async () => {
    const { unclaimed, captured } = capturing();
    for (const init of [
      { url: "/hooks/m", identity: { via: "token" as const, viaQuery: false } },
      { url: "/hooks/wake", identity: { via: "token" as const, viaQuery: false } },
      { url: "/hooks/new-sender" },
    ]) {
      const body = watchedBody(BODY);
      const ctx = admittedContext({ ...init, sent: body });
      expect(await runStage(unclaimed, ctx)).toBe(ctx);
      expect(body.pulled()).toBe(false);
    }
    expect(captured).toEqual([]);
  });

  it("captures nothing of a body over the limit, and still passes the request on to its 404", async () => {
    const { unclaimed, captured } = capturing();
    const ctx = admittedContext({
      url: "/hooks/new-sender",
      identity: { via: "token", viaQuery: false },
      sent: "x".repeat(300_000),
    });
    expect(await runStage(unclaimed, ctx)).toBe(ctx);
    expect(captured).toEqual([]);
  });
});

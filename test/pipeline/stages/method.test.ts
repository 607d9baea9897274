/** @module The method stage: POST passes, GET only where the sender subscribes with a handshake (Meta), anything else 405 with the Allow its path takes. */
import { describe, expect, it } from "vitest";
import { method } from "../../../src/pipeline/stages/method.js";
import {
  contextOf,
  META_SECRET,
  prepare,
  refusalOf,
  runStage,
  VERIFY_TOKEN,
  verifiersOf,
} from "./context.js";

const verifiers = verifiersOf(
  prepare({
    mappings: [
      {
        id: "whatsapp",
        match: { path: "whatsapp" },
        verify: { scheme: "meta", secret: META_SECRET, verifyToken: VERIFY_TOKEN },
        action: "wake",
        textTemplate: "message",
      },
    ],
  }),
);
const handshakePath = (httpMethod: string) =>
  contextOf({ method: httpMethod, url: "/hooks/whatsapp", verifier: verifiers.forHook("whatsapp") });

describe("the method stage", () => {
  it("passes a POST on, the context itself unchanged", async () => {
    const ctx = contextOf({ method: "POST" });
    expect(await runStage(method, ctx)).toBe(ctx);
    const signed = handshakePath("POST");
    expect(await runStage(method, signed)).toBe(signed);
  });

  it("passes a GET on a path whose sender subscribes with one", async () => {
    const ctx = handshakePath("GET");
    expect(ctx.verifier.handshake).toBeDefined();
    expect(await runStage(method, ctx)).toBe(ctx);
  });

  it.each(["GET", "HEAD", "PUT", "DELETE"])(
    "refuses %s on a token path: 405 METHOD_NOT_ALLOWED, Allow: POST",
    async (httpMethod) => {
      const refused = await refusalOf(method, contextOf({ method: httpMethod }));
      expect([refused.code, refused.status, refused.headers]).toEqual([
        "METHOD_NOT_ALLOWED",
        405,
        { Allow: "POST" },
      ]);
      expect(refused.message).toBe("Hooks accept POST only.");
    },
  );

  it.each(["HEAD", "PUT", "OPTIONS"])(
    "refuses %s on a handshake path: 405, Allow: GET, POST",
    async (httpMethod) => {
      const refused = await refusalOf(method, handshakePath(httpMethod));
      expect([refused.status, refused.headers]).toEqual([405, { Allow: "GET, POST" }]);
    },
  );
});

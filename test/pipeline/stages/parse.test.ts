/** @module The parse stage: JSON or a form's fields set on a new context with the text; invalid JSON is 400 with its position only; JSON relabelled as a form on a signed path is refused; Slack's url_verification is answered with its challenge. */
import { describe, expect, it } from "vitest";
import type { BodyKind } from "../../../src/pipeline/stages/parse.js";
import { parse } from "../../../src/pipeline/stages/parse.js";
import type { Verifier } from "../../../src/verify/verifier.js";
import {
  admittedContext,
  GITHUB_SECRET,
  nextOf,
  outcomeOf,
  prepare,
  refusalOf,
  SLACK_SECRET,
  tokenVerifier,
  verifiersOf,
} from "./context.js";

const verifiers = verifiersOf(
  prepare({
    mappings: [
      {
        id: "github",
        match: { path: "github" },
        verify: { scheme: "github", secret: GITHUB_SECRET },
        action: "wake",
        textTemplate: "x",
      },
      {
        id: "slack",
        match: { path: "slack" },
        verify: { scheme: "slack", secret: SLACK_SECRET },
        action: "wake",
        textTemplate: "x",
      },
    ],
  }),
);

const read = (text: string, bodyKind: BodyKind, verifier: Verifier = tokenVerifier) =>
  admittedContext({
    verifier,
    route: { kind: "wake" },
    bodyKind,
    maxBytes: 1_000,
    raw: Buffer.from(text),
    identity: { via: verifier === tokenVerifier ? "token" : "signature", viaQuery: false },
  });

describe("the parse stage", () => {
  it("parses JSON onto a new context, beside its text", async () => {
    const ctx = read('{"text":"héllo","n":[1,2]}', "json");
    const next = await nextOf(parse, ctx);
    expect(next).toEqual({ ...ctx, text: '{"text":"héllo","n":[1,2]}', body: { text: "héllo", n: [1, 2] } });
    expect([ctx.text, ctx.body]).toEqual([undefined, undefined]);
  });

  it("parses a form into string fields, a repeated key into a list, __proto__ as a plain field", async () => {
    const next = await nextOf(parse, read("text=a+b&tag=x&tag=y&__proto__=z", "form"));
    expect(next.body).toEqual({ text: "a b", tag: ["x", "y"], ["__proto__"]: "z" });
    expect(Object.getPrototypeOf(next.body)).toBe(Object.prototype);
  });

  it.each(["", "  \n\t"])("reads an empty or blank body (%j) as {}", async (text) => {
    expect((await nextOf(parse, read(text, "json"))).body).toEqual({});
  });

  it("refuses invalid JSON 400 INVALID_JSON, telling the position and never the body", async () => {
    const refused = await refusalOf(parse, read('{"secret-ish" 1}', "json"));
    expect([refused.code, refused.status]).toEqual(["INVALID_JSON", 400]);
    expect(refused.message).toBe("The body is not valid JSON (at position 14).");
    expect(refused.message).not.toContain("secret-ish");
  });

  it("refuses JSON labelled as a form on a signed path: 400 INVALID_PAYLOAD, reason MEDIA_TYPE_MISMATCH", async () => {
    const json = '{"action":"opened","number":7}';
    const refused = await refusalOf(parse, read(json, "form", verifiers.forHook("github")));
    expect([refused.code, refused.status, refused.reason]).toEqual([
      "INVALID_PAYLOAD",
      400,
      "MEDIA_TYPE_MISMATCH",
    ]);
    // The same bytes on a token path are what their label says: a form, with one odd field.
    expect((await nextOf(parse, read(json, "form"))).body).toEqual({ [json]: "" });
  });

  it("reads a real form on a signed path as a form", async () => {
    const next = await nextOf(
      parse,
      read("command=%2Fdeploy&trigger_id=1.2.3", "form", verifiers.forHook("slack")),
    );
    expect(next.body).toEqual({ command: "/deploy", trigger_id: "1.2.3" });
  });

  it("answers Slack's url_verification with its challenge as plain text, nothing parsed on", async () => {
    const ctx = read(
      JSON.stringify({
        type: "url_verification",
        token: "legacy",
        challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      }),
      "json",
      verifiers.forHook("slack"),
    );
    const outcome = await outcomeOf(parse, ctx);
    expect(outcome.response).toEqual({
      status: 200,
      headers: {
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": "52",
        "X-Content-Type-Options": "nosniff",
        "X-Request-Id": "req-1",
      },
      body: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    });
    expect(outcome.refusal).toBeUndefined();
    expect(outcome.ctx).toBe(ctx);
  });

  it("refuses a url_verification whose challenge cannot be echoed: 400 INVALID_HANDSHAKE", async () => {
    const ctx = read(JSON.stringify({ type: "url_verification" }), "json", verifiers.forHook("slack"));
    const refused = await refusalOf(parse, ctx);
    expect([refused.code, refused.status]).toEqual(["INVALID_HANDSHAKE", 400]);
  });

  it("parses a url_verification body on a path Slack does not sign like any other body", async () => {
    const next = await nextOf(parse, read('{"type":"url_verification","challenge":"c"}', "json"));
    expect(next.body).toEqual({ type: "url_verification", challenge: "c" });
  });
});

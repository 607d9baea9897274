/** @module The authenticate stage on a context: a token is judged before any byte is read, a signed path's body is read only for an address not throttled and then judged, and Meta's GET handshake is answered with its challenge. */
import { beforeEach, describe, expect, it } from "vitest";
import { Admission } from "../../../src/pipeline/admission.js";
import { createCredentialJudge } from "../../../src/pipeline/credential-judge.js";
import { createAuthenticateStage } from "../../../src/pipeline/stages/authenticate.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  admittedContext,
  type ContextInit,
  clockAt,
  GITHUB_SECRET,
  githubSignature,
  META_SECRET,
  nextOf,
  outcomeOf,
  prepare,
  quiet,
  refusalOf,
  resolverOf,
  runStage,
  TOKEN,
  VERIFY_TOKEN,
  verifiersOf,
  watchedBody,
} from "./context.js";

const prepared = prepare({
  mappings: [
    {
      id: "github",
      match: { path: "github" },
      verify: { scheme: "github", secret: GITHUB_SECRET },
      action: "wake",
      textTemplate: "{{action}}",
    },
    {
      id: "signed-only",
      match: { path: "signed-only" },
      verify: { scheme: "github", secret: GITHUB_SECRET, tokenAlso: false },
      action: "wake",
      textTemplate: "{{action}}",
    },
    {
      id: "whatsapp",
      match: { path: "whatsapp" },
      verify: { scheme: "meta", secret: META_SECRET, verifyToken: VERIFY_TOKEN },
      action: "wake",
      textTemplate: "message",
    },
  ],
});
const verifiers = verifiersOf(prepared);
const BODY = JSON.stringify({ action: "opened", number: 7 });

/** A fresh stage per test: its own failure counts, its own budgets. One failure is allowed; the second is 429. */
function authenticateStage() {
  const clock = clockAt();
  const judge = createCredentialJudge({
    store: new MemoryStore(clock),
    logger: quiet,
    clock,
    limit: 1,
    windowMs: 60_000,
  });
  return createAuthenticateStage({
    judge,
    clock,
    resolver: resolverOf(prepared),
    admission: new Admission(prepared.config.admission),
    bodyTimeoutMs: 30_000,
    unverifiedBodyTimeoutMs: 10_000,
  });
}

const onHook = (hook: string, init: ContextInit = {}) =>
  admittedContext({ url: `/hooks/${hook}`, verifier: verifiers.forHook(hook), ...init });

let authenticate: ReturnType<typeof authenticateStage>;
beforeEach(() => {
  authenticate = authenticateStage();
});

describe("the authenticate stage on a token path", () => {
  it("accepts the hook token before a byte is read: a new context with its identity", async () => {
    const body = watchedBody(BODY);
    const ctx = onHook("wake", { headers: { authorization: `Bearer ${TOKEN}` }, sent: body });
    const next = await nextOf(authenticate, ctx);
    expect(next).toEqual({ ...ctx, identity: { via: "token", viaQuery: false } });
    expect(next.extra).toBeUndefined();
    expect(body.pulled()).toBe(false);
  });

  it("accepts the deprecated ?token= and says so in a Deprecation header", async () => {
    const next = await nextOf(authenticate, onHook("wake", { url: `/hooks/wake?token=${TOKEN}` }));
    expect(next.identity).toEqual({ via: "token", viaQuery: true });
    expect(next.extra).toEqual({ Deprecation: "true" });
  });

  it("refuses a request without a token: 401 with WWW-Authenticate, reason TOKEN_MISSING", async () => {
    const refused = await refusalOf(authenticate, onHook("wake"));
    expect([refused.code, refused.status, refused.reason]).toEqual(["UNAUTHORIZED", 401, "TOKEN_MISSING"]);
    expect(refused.headers).toEqual({ "WWW-Authenticate": 'Bearer realm="hooks"' });
    expect(refused.message).toBe("A hook token is required.");
  });

  it("refuses a wrong token 401 TOKEN_WRONG, then 429 with Retry-After once the address is past its limit", async () => {
    const wrong = () => onHook("wake", { headers: { authorization: "Bearer nope" } });
    const first = await refusalOf(authenticate, wrong());
    expect([first.status, first.reason]).toEqual([401, "TOKEN_WRONG"]);
    const second = await refusalOf(authenticate, wrong());
    expect([second.code, second.status, second.headers]).toEqual([
      "AUTH_THROTTLED",
      429,
      { "Retry-After": "60" },
    ]);
  });
});

describe("the authenticate stage on a signed path", () => {
  it("reads the body, judges its signature, and passes on the bytes, route, kind and limit", async () => {
    const body = watchedBody(BODY);
    const ctx = onHook("github", {
      headers: { "x-hub-signature-256": githubSignature(BODY), "content-type": "application/json" },
      sent: body,
    });
    const next = await nextOf(authenticate, ctx);
    expect(body.pulled()).toBe(true);
    expect(next.identity).toEqual({ via: "signature", viaQuery: false });
    expect(next.raw?.toString()).toBe(BODY);
    expect(next.route).toEqual({ kind: "mapped", claim: expect.objectContaining({ hook: "github" }) });
    expect([next.bodyKind, next.maxBytes]).toEqual(["json", prepared.config.maxBodyBytes]);
    expect([ctx.raw, ctx.route, ctx.identity]).toEqual([undefined, undefined, undefined]);
  });

  it("refuses a wrong signature 401 SIGNATURE_MISMATCH, having read the body to judge it", async () => {
    const body = watchedBody(BODY);
    const refused = await refusalOf(
      authenticate,
      onHook("github", {
        headers: { "x-hub-signature-256": githubSignature(BODY, "another-secret") },
        sent: body,
      }),
    );
    expect([refused.code, refused.status, refused.reason]).toEqual([
      "UNAUTHORIZED",
      401,
      "SIGNATURE_MISMATCH",
    ]);
    expect(refused.message).toBe("The request's signature could not be verified.");
    expect(body.pulled()).toBe(true);
  });

  it("offers no Bearer challenge on a path that accepts only signatures", async () => {
    const refused = await refusalOf(authenticate, onHook("signed-only", { sent: BODY }));
    expect([refused.status, refused.reason, refused.headers]).toEqual([401, "SIGNATURE_MISSING", undefined]);
  });

  it("refuses a throttled address 429 before reading the body: not a byte of it pulled", async () => {
    const wrong = () => onHook("wake", { headers: { authorization: "Bearer nope" } });
    await refusalOf(authenticate, wrong());
    await refusalOf(authenticate, wrong());
    const body = watchedBody(BODY);
    const refused = await refusalOf(
      authenticate,
      onHook("github", { headers: { "x-hub-signature-256": githubSignature(BODY) }, sent: body }),
    );
    expect([refused.code, refused.status, refused.headers]).toEqual([
      "AUTH_THROTTLED",
      429,
      { "Retry-After": "60" },
    ]);
    expect(body.pulled()).toBe(false);
    expect(body.readableFlowing).toBeNull();
    expect(body.listenerCount("data")).toBe(0);
    // The stream is whole: nobody started it.
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(BODY);
  });

  it("takes the hook token on a path that accepts it too, and leaves the body to the body stage", async () => {
    const body = watchedBody(BODY);
    const next = await nextOf(
      authenticate,
      onHook("github", { headers: { authorization: `Bearer ${TOKEN}` }, sent: body }),
    );
    expect(next.identity).toEqual({ via: "token", viaQuery: false });
    expect([next.raw, next.route]).toEqual([undefined, undefined]);
    expect(body.pulled()).toBe(false);
  });

  it("refuses a declared length over the limit 413, and a content type it cannot read 415, before reading", async () => {
    const big = watchedBody(BODY);
    const tooLarge = await refusalOf(
      authenticate,
      onHook("github", {
        headers: { "content-length": String(prepared.config.maxBodyBytes + 1) },
        sent: big,
      }),
    );
    expect([tooLarge.code, tooLarge.status]).toEqual(["PAYLOAD_TOO_LARGE", 413]);
    const xml = watchedBody(BODY);
    const unreadable = await refusalOf(
      authenticate,
      onHook("github", { headers: { "content-type": "text/xml" }, sent: xml }),
    );
    expect([unreadable.code, unreadable.status]).toEqual(["UNSUPPORTED_MEDIA_TYPE", 415]);
    expect([big.pulled(), xml.pulled()]).toEqual([false, false]);
  });

  it("reads nothing for a signed name nothing claims: the context goes on as it came, for the claim's 404", async () => {
    const body = watchedBody(BODY);
    const ctx = admittedContext({
      url: "/hooks/unclaimed",
      verifier: verifiers.forHook("github"),
      sent: body,
    });
    expect(await runStage(authenticate, ctx)).toBe(ctx);
    expect(body.pulled()).toBe(false);
  });
});

describe("the authenticate stage on Meta's subscription GET", () => {
  const handshake = (query: Record<string, string>) =>
    onHook("whatsapp", { method: "GET", url: `/hooks/whatsapp?${new URLSearchParams(query)}` });

  it("answers the challenge as plain text once the verify token is right", async () => {
    const outcome = await outcomeOf(
      authenticate,
      handshake({ "hub.mode": "subscribe", "hub.challenge": "1158201444", "hub.verify_token": VERIFY_TOKEN }),
    );
    expect(outcome.response).toEqual({
      status: 200,
      headers: {
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": "10",
        "X-Content-Type-Options": "nosniff",
        "X-Request-Id": "req-1",
      },
      body: "1158201444",
    });
    expect(outcome.refusal).toBeUndefined();
  });

  it("refuses a wrong verify token 403 HANDSHAKE_REFUSED, and a handshake that is not a subscription 400", async () => {
    const wrong = await refusalOf(
      authenticate,
      handshake({ "hub.mode": "subscribe", "hub.challenge": "1", "hub.verify_token": "not-it" }),
    );
    expect([wrong.code, wrong.status]).toEqual(["HANDSHAKE_REFUSED", 403]);
    const unsubscribe = await refusalOf(
      authenticate,
      handshake({ "hub.mode": "unsubscribe", "hub.challenge": "1", "hub.verify_token": VERIFY_TOKEN }),
    );
    expect([unsubscribe.code, unsubscribe.status]).toEqual(["INVALID_HANDSHAKE", 400]);
  });

  it("counts a wrong verify token as a failed authentication: the next GET from the address is 429", async () => {
    const wrong = () => handshake({ "hub.mode": "subscribe", "hub.challenge": "1", "hub.verify_token": "x" });
    await refusalOf(authenticate, wrong());
    expect((await refusalOf(authenticate, wrong())).status).toBe(429);
    const right = handshake({
      "hub.mode": "subscribe",
      "hub.challenge": "1",
      "hub.verify_token": VERIFY_TOKEN,
    });
    expect((await refusalOf(authenticate, right)).code).toBe("AUTH_THROTTLED");
  });
});

import type { Clock } from "../../clock.js";
import type { AuthVerdict, CredentialsView } from "../../verify/verifier.js";
import type { Admission } from "../admission.js";
import type { CredentialJudge, Judged } from "../credential-judge.js";
import { challengeResponse } from "../handshake.js";
import type { PipelineRequest } from "../request.js";
import { answer, need, type RequestContext, type Stage } from "../stage.js";
import { classifyContentType } from "./parse.js";
import { checkDeclaredLength, readLimitedBody } from "./read-body.js";
import type { Resolver } from "./resolve.js";

export interface AuthenticateStageDeps {
  judge: CredentialJudge;
  clock: Clock;
  /** The route of a signed path, for its body limit. */
  resolver: Resolver;
  /** Where unverified bodies reserve their room. */
  admission: Admission;
  bodyTimeoutMs: number;
  /** The deadline of a body read before its signature can be checked (shorter: nothing vouches for it yet). */
  unverifiedBodyTimeoutMs: number;
}

/**
 * A token is judged before any byte of the body is read, on a signed path that takes one too: a correct token gets
 * in whatever failures its address has. A signature can only be judged on those bytes, so there a throttled address
 * is refused first, without a byte read or a hash computed, and the body is read within the budget unverified bodies
 * share, then judged.
 */
export function createAuthenticateStage(deps: AuthenticateStageDeps): Stage {
  return function authenticate(ctx) {
    const { verifier, request } = ctx;
    const view = credentialsOf(ctx, deps.clock);
    // Meta's subscription GET: its verify token is its credential, judged and counted as the hook token is; only then
    // is the query read for the challenge. No body, no mapping, no event. A token that travels in URLs gets no way
    // past the limit on failures, and clears none.
    if (request.method === "GET" && verifier.handshake !== undefined) return answerHandshake(deps, ctx, view);
    // A token is judged without a promise when the verifier and the judge answer at once (the hook token, accepted).
    const verdict = verifier.verify(view);
    return verdict instanceof Promise
      ? verdict.then((told) => judged(deps, ctx, view, told))
      : judged(deps, ctx, view, verdict);
  };
}

function judged(
  deps: AuthenticateStageDeps,
  ctx: RequestContext,
  view: CredentialsView,
  verdict: AuthVerdict,
): RequestContext | Promise<RequestContext> {
  if (verdict.needsBody === true) return signedBody(deps, ctx, view);
  const identity = deps.judge.judge(verdict, judgedOf(ctx), "token");
  return identity instanceof Promise
    ? identity.then((found) => identified(ctx, found))
    : identified(ctx, identity);
}

async function answerHandshake(deps: AuthenticateStageDeps, ctx: RequestContext, view: CredentialsView) {
  const handshake = need(ctx.verifier.handshake, "the handshake");
  const who = judgedOf(ctx);
  await deps.judge.refuseThrottled(who);
  const verdict = await handshake.verify(view);
  if (verdict.needsBody === true) throw new Error(`verifier ${handshake.kind} asked for a GET's body`);
  await deps.judge.judge(verdict, { ...who, kind: handshake.kind }, "handshake");
  return answer(ctx, challengeResponse(handshake.challengeOf(ctx.target.query), ctx.requestId));
}

/** A signed path: a throttled address is refused first, then the body is read within its budget and judged. */
async function signedBody(
  deps: AuthenticateStageDeps,
  ctx: RequestContext,
  view: CredentialsView,
): Promise<RequestContext> {
  const { verifier, request } = ctx;
  const who = judgedOf(ctx);
  await deps.judge.refuseThrottled(who);
  const route = deps.resolver.route(ctx.hook);
  // Nothing claims the name: the claim stage answers 404, and no byte is read.
  if (route === undefined) return ctx;
  const bodyKind = classifyContentType(request.headers["content-type"]);
  const maxBytes = deps.resolver.bodyLimit(route);
  checkDeclaredLength(request.headers, maxBytes);
  const { raw, result } = await readSigned(deps, who.client, request, maxBytes, async (bytes) => {
    const signed = await verifier.verify({ ...view, now: deps.clock.now() }, bytes);
    if (signed.needsBody === true) throw new Error(`verifier ${verifier.kind} asked for the body twice`);
    return deps.judge.judge(signed, who, "signature");
  });
  return { ...identified(ctx, result), route, bodyKind, maxBytes, raw };
}

/**
 * A signed path's body, verified: room for it is reserved among the unverified bodies before a byte is read (its
 * declared length, or the limit when it declares none), it gets the shorter deadline, and the room is given back
 * once its signature was judged.
 */
async function readSigned<T>(
  deps: Pick<AuthenticateStageDeps, "admission" | "bodyTimeoutMs" | "unverifiedBodyTimeoutMs">,
  client: string,
  request: PipelineRequest,
  maxBytes: number,
  verify: (raw: Buffer) => Promise<T>,
): Promise<{ raw: Buffer; result: T }> {
  const declared = Number(request.headers["content-length"]);
  const bytes = Number.isSafeInteger(declared) && declared >= 0 ? declared : maxBytes;
  const release = deps.admission.reserveUnverified(client, bytes);
  try {
    const raw = await readLimitedBody(request.body, {
      maxBytes,
      timeoutMs: Math.min(deps.unverifiedBodyTimeoutMs, deps.bodyTimeoutMs),
    });
    return { raw, result: await verify(raw) };
  } finally {
    release();
  }
}

function identified(ctx: RequestContext, identity: NonNullable<RequestContext["identity"]>): RequestContext {
  return identity.viaQuery ? { ...ctx, identity, extra: { Deprecation: "true" } } : { ...ctx, identity };
}

function judgedOf(ctx: RequestContext): Judged {
  return {
    hook: ctx.hook,
    kind: ctx.verifier.kind,
    client: need(ctx.client, "the client address"),
    requestId: ctx.requestId,
    headers: ctx.request.headers,
  };
}

function credentialsOf(ctx: RequestContext, clock: Clock): CredentialsView {
  return {
    headers: ctx.request.headers,
    query: ctx.target.query,
    rawQuery: ctx.target.rawQuery,
    now: clock.now(),
  };
}

/** @module The capture stages of `hooks serve --capture`: every authenticated request whose body was read, credentials removed, claimed by a mapping or not (a new sender's first payload). */
import type { HostLogger } from "../../host/contract.js";
import type { CapturedRequest } from "../request.js";
import { need, type RequestContext, type Stage } from "../stage.js";
import { checkDeclaredLength, readLimitedBody } from "./read-body.js";
import type { Resolver } from "./resolve.js";
import { viewOf } from "./resolve.js";

export interface CaptureDeps {
  capture: (request: CapturedRequest) => void;
  credentialHeaders: ReadonlySet<string>;
  logger: HostLogger;
}

/** After the body: hands the request to the capture; a failing capture never fails the request. */
export function createCaptureStage(deps: CaptureDeps): Stage {
  return function capture(ctx) {
    const view = ctx.view ?? viewOf(ctx, deps.credentialHeaders);
    deliver(deps, ctx, view.headers, view.query, need(ctx.raw, "the body"));
    return { ...ctx, view };
  };
}

/** Before the claim: a name nothing claims yet still has its body read and captured; the sender gets its 404. */
export function createCaptureUnclaimedStage(
  deps: CaptureDeps & { resolver: Resolver; bodyTimeoutMs: number },
): Stage {
  return async function captureUnclaimed(ctx) {
    if (ctx.identity === undefined || ctx.route !== undefined) return ctx;
    if (deps.resolver.route(ctx.hook) !== undefined) return ctx;
    let raw: Buffer;
    try {
      const maxBytes = deps.resolver.bodyLimit({ kind: "wake" });
      checkDeclaredLength(ctx.request.headers, maxBytes);
      raw = await readLimitedBody(ctx.request.body, { maxBytes, timeoutMs: deps.bodyTimeoutMs });
    } catch {
      return ctx; // Not capturable; the sender still gets its 404.
    }
    const view = viewOf(ctx, deps.credentialHeaders);
    deliver(deps, ctx, view.headers, view.query, raw);
    return ctx;
  };
}

function deliver(
  deps: CaptureDeps,
  ctx: RequestContext,
  headers: Record<string, string>,
  query: Record<string, string>,
  rawBody: Buffer,
): void {
  try {
    deps.capture({
      requestId: ctx.requestId,
      method: ctx.request.method,
      hook: ctx.hook,
      headers,
      query,
      rawBody,
    });
  } catch (error) {
    deps.logger.warn(`request capture failed: ${(error as Error).message}`, { requestId: ctx.requestId });
  }
}

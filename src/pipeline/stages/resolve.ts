/** @module The resolve stage: what the body turns into (a wake, an agent turn, or what a mapping makes of it), as plans to emit. */

import { type ActionPlan, type PlanContext, planAction } from "../../actions/plan-action.js";
import {
  type ActionPolicy,
  type HookAction,
  validateAgentAction,
  validateWakeAction,
} from "../../actions/validate-action.js";
import type { Ids } from "../../clock.js";
import type { EventSource } from "../../events.js";
import type { CompiledMapping } from "../../mapping/compile-mappings.js";
import type { MappedRequest, MappingClaim } from "../../mapping/engine-types.js";
import type { MappingEngine } from "../../mapping/mapping-engine.js";
import {
  headersWithoutCredentials,
  queryWithoutCredentials,
  urlWithoutCredentials,
} from "../../safety/credentials.js";
import type { ExternalSource } from "../../safety/wrap-external.js";
import type { RateLimiter } from "../rate-limit.js";
import type { HookRoute, Resolution, ResolutionNotes } from "../resolution.js";
import { need, type RequestContext, type RequestView, type Stage, StageFailure } from "../stage.js";

export interface ResolveStageDeps {
  resolver: Resolver;
  /** Headers no mapping sees: the credential list plus this config's own signature headers. */
  credentialHeaders: ReadonlySet<string>;
  /** Counts a mapping's own rate limit once it owns the request, before its templates or transform run. */
  rateLimiter: RateLimiter;
}

export function createResolveStage(deps: ResolveStageDeps): Stage {
  return function resolve(ctx) {
    const raw = need(ctx.raw, "the body");
    const route = need(ctx.route, "the route");
    // Mappings see the request without credentials; a direct wake or agent body needs none of it.
    const view = ctx.view ?? (route.kind === "mapped" ? viewOf(ctx, deps.credentialHeaders) : undefined);
    // What resolving learns even when it fails (the owning mapping, its trace) is kept for the listing and replay:
    // written by the resolver as it goes, read once the request is over.
    const notes: ResolutionNotes = {};
    const shown: RequestView = view ?? NO_VIEW;
    const learnt = { ...ctx, view, notes };
    const failed = (error: unknown): never => {
      throw new StageFailure(error, learnt);
    };
    let resolution: Resolution | Promise<Resolution>;
    try {
      resolution = deps.resolver.resolve(
        route,
        {
          hook: ctx.hook,
          ...shown,
          body: ctx.body,
          rawBody: raw,
          bodyBytes: raw.length,
          requestId: ctx.requestId,
        },
        notes,
        (mapping) =>
          deps.rateLimiter({
            rule: mapping.rateLimit,
            owner: { kind: "mapping", mappingId: mapping.id },
            hook: ctx.hook,
            client: need(ctx.client, "the client address"),
            requestId: ctx.requestId,
          }),
      );
    } catch (error) {
      return failed(error);
    }
    if (resolution instanceof Promise)
      return resolution.then((resolved) => ({ ...learnt, resolution: resolved }), failed);
    return { ...learnt, resolution };
  };
}

const NO_VIEW: RequestView = Object.freeze({ headers: Object.freeze({}), query: Object.freeze({}), url: "" });

export interface ResolverDeps {
  engine: MappingEngine;
  policy: ActionPolicy;
  mainSessionKey: string;
  maxBodyBytes: number;
  /** The longest text a wake or a turn carries (`hooks.maxTextChars`). */
  maxTextChars: number;
  ids: Ids;
}

const WAKE: HookRoute = { kind: "wake" };
const AGENT: HookRoute = { kind: "agent" };

export class Resolver {
  constructor(private readonly deps: ResolverDeps) {}

  /** The route for a hook name, or undefined when nothing can claim it (404 before the body is read). */
  route(hook: string): HookRoute | undefined {
    if (hook === "wake") return WAKE;
    if (hook === "agent") return AGENT;
    if (hook === "") return undefined;
    const claim = this.deps.engine.claim(hook);
    return claim ? { kind: "mapped", claim } : undefined;
  }

  bodyLimit(route: HookRoute): number {
    return route.kind === "mapped" ? route.claim.maxBodyBytes : this.deps.maxBodyBytes;
  }

  /**
   * The request's resolution, or a HookError thrown; `notes` keeps the mapping and trace either way. `admitMapping`
   * is asked about the mapping that owns the request before its templates or transform run (its rate limit).
   */
  resolve(
    route: HookRoute,
    request: MappedRequest,
    notes: ResolutionNotes,
    admitMapping?: (mapping: CompiledMapping) => Promise<void>,
  ): Resolution | Promise<Resolution> {
    // A direct wake or agent request resolves at once, without a promise; a mapping may run a transform.
    return route.kind === "mapped"
      ? this.resolveMapped(route.claim, request, notes, admitMapping)
      : this.resolveDirect(route.kind, request);
  }

  private resolveDirect(kind: "wake" | "agent", request: MappedRequest): Resolution {
    const action: HookAction =
      kind === "wake"
        ? validateWakeAction(request.body, this.deps.policy.agents)
        : validateAgentAction(request.body, this.deps.policy);
    const plan = planAction(action, this.planContext(request, undefined, false, "Webhook", undefined));
    const resolution: Resolution = {
      status: plan.response.kind === "agent" ? 202 : 200,
      body: directBody(plan),
      plans: [plan],
    };
    // The body passed the agent schema, so the flag is a boolean when present.
    if (wantsCompletion(request.body)) resolution.awaitRun = plan.run;
    return resolution;
  }

  private async resolveMapped(
    claim: MappingClaim,
    request: MappedRequest,
    notes: ResolutionNotes,
    admitMapping?: (mapping: CompiledMapping) => Promise<void>,
  ): Promise<Resolution> {
    const result = await this.deps.engine.run(claim, request, admitMapping);
    notes.mappingId = result.mappingId;
    notes.trace = result.trace;
    if (!result.ok) throw result.error;
    const { mappingId } = result;
    const plans = result.actions.map((mapped) =>
      planAction(
        mapped.action,
        this.planContext(request, mappingId, mapped.allowUnsafe, mapped.contentSource, mapped.instructions),
      ),
    );
    // One object literal with every field: spreading a partial object and adding fields gives each result a
    // new hidden class on V8 11 (Node 20), measured at about 10 µs per mapped request (bench/PROFILE.md).
    const empty = plans.length === 0;
    const reply = result.response;
    const resolution: Resolution = {
      status: reply ? reply.status : empty ? 204 : plans.some((plan) => plan.run) ? 202 : 200,
      body: empty ? undefined : mappedBody(plans, mappingId),
      mappingId,
      plans,
      reply,
      // A transform may have turned the action into a wake: then there is no turn to wait for.
      awaitRun: result.waitForCompletion ? plans[0]?.run : undefined,
    };
    return resolution;
  }

  private planContext(
    request: MappedRequest,
    mappingId: string | undefined,
    allowUnsafe: boolean,
    contentSource: ExternalSource,
    instructions: string | undefined,
  ): PlanContext {
    const source: EventSource =
      mappingId === undefined
        ? { hook: request.hook, requestId: request.requestId }
        : { hook: request.hook, mappingId, requestId: request.requestId };
    return {
      source,
      mainSessionKey: this.deps.mainSessionKey,
      allowUnsafe,
      contentSource,
      instructions,
      maxTextChars: this.deps.maxTextChars,
      ids: this.deps.ids,
    };
  }
}

function wantsCompletion(body: unknown): boolean {
  return (body as { waitForCompletion?: unknown }).waitForCompletion === true;
}

function directBody(plan: ActionPlan): Record<string, unknown> {
  const response = plan.response;
  return response.kind === "wake"
    ? { ok: true, mode: response.mode, eventId: response.eventId }
    : { ok: true, runId: response.runId, sessionKey: response.sessionKey };
}

function mappedBody(plans: ActionPlan[], mappingId: string | undefined): Record<string, unknown> {
  const agentRuns = plans.flatMap((plan) => (plan.response.kind === "agent" ? [plan.response] : []));
  const first = agentRuns[0];
  if (first) {
    const body: Record<string, unknown> = {
      ok: true,
      runId: first.runId,
      sessionKey: first.sessionKey,
      mappingId,
    };
    if (plans.length > 1) body.runIds = agentRuns.map((run) => run.runId);
    return body;
  }
  const wake = plans[0]!.response;
  return { ok: true, mode: wake.kind === "wake" ? wake.mode : "now", mappingId };
}

/** The view of a request without its credential headers and query parameters. */
export function viewOf(ctx: RequestContext, credentialHeaders: ReadonlySet<string>): RequestView {
  const { pathname, query } = ctx.target;
  return {
    headers: headersWithoutCredentials(ctx.request.headers, credentialHeaders),
    query: queryWithoutCredentials(query),
    url: urlWithoutCredentials(pathname, query),
  };
}

export type { HookRoute, Resolution, ResolutionNotes } from "../resolution.js";

/** @module Routes a hook name to wake, agent or the mapping engine, and turns the result into a response and a plan. */
import type { ResolvedHooksConfig } from "../config/resolve.js";
import type { EventSource } from "../events.js";
import { type HookError, toHookError } from "../http/errors.js";
import type {
  MappedRequest,
  MappingClaim,
  MappingEngine,
  MappingResult,
  MappingTrace,
} from "../mapping/engine-types.js";
import type { ExternalSource } from "../safety/wrap-external.js";
import { type ActionPlan, planAction } from "./plan-action.js";
import {
  type ActionPolicy,
  type HookAction,
  validateAgentAction,
  validateWakeAction,
} from "./validate-action.js";

export type HookRoute = { kind: "wake" } | { kind: "agent" } | { kind: "mapped"; claim: MappingClaim };

export interface DispatchOutcome {
  status: number;
  /** Response body; undefined for 204. */
  body: unknown;
  mappingId?: string;
  /** What to emit and track; empty when the request failed. */
  plans: ActionPlan[];
  error?: HookError;
  trace?: MappingTrace;
}

const WAKE: HookRoute = { kind: "wake" };
const AGENT: HookRoute = { kind: "agent" };

export class RequestDispatcher {
  constructor(
    private readonly config: ResolvedHooksConfig,
    private readonly engine: MappingEngine,
    private readonly policy: ActionPolicy,
  ) {}

  /** The route for a hook name, or undefined when nothing can claim it (404 before the body is read). */
  route(hook: string): HookRoute | undefined {
    if (hook === "wake") return WAKE;
    if (hook === "agent") return AGENT;
    const claim = this.engine.claim(hook);
    return claim ? { kind: "mapped", claim } : undefined;
  }

  bodyLimit(route: HookRoute): number {
    return route.kind === "mapped" ? route.claim.maxBodyBytes : this.config.maxBodyBytes;
  }

  /**
   * Never rejects: failures come back as outcomes. Answered synchronously (no promise hop on the hot path)
   * unless a mapping waits for an asynchronous transform.
   */
  dispatch(route: HookRoute, request: MappedRequest): DispatchOutcome | Promise<DispatchOutcome> {
    try {
      if (route.kind === "mapped") {
        const result = this.engine.run(route.claim, request);
        if (result instanceof Promise) {
          return result.then((settled) => this.mappedOutcome(settled, request)).catch(failedOutcome);
        }
        return this.mappedOutcome(result, request);
      }
      const action: HookAction =
        route.kind === "wake"
          ? validateWakeAction(request.body)
          : validateAgentAction(request.body, this.policy);
      const plan = planAction(action, this.planContext(request, undefined, false, "Webhook"));
      return { status: statusOf(plan), body: directBody(plan), plans: [plan] };
    } catch (error) {
      return failedOutcome(error);
    }
  }

  private mappedOutcome(result: MappingResult, request: MappedRequest): DispatchOutcome {
    const base = result.mappingId === undefined ? {} : { mappingId: result.mappingId };
    if (!result.ok) {
      return {
        ...base,
        status: result.error.status,
        body: result.error.toJSON(),
        plans: [],
        error: result.error,
        trace: result.trace,
      };
    }
    const plans = result.actions.map((mapped) =>
      planAction(
        mapped.action,
        this.planContext(request, result.mappingId, mapped.allowUnsafe, mapped.contentSource),
      ),
    );
    if (plans.length === 0) return { ...base, status: 204, body: undefined, plans, trace: result.trace };
    return {
      ...base,
      status: plans.some((plan) => plan.run) ? 202 : 200,
      body: mappedBody(plans, result.mappingId),
      plans,
      trace: result.trace,
    };
  }

  private planContext(
    request: MappedRequest,
    mappingId: string | undefined,
    allowUnsafe: boolean,
    contentSource: ExternalSource,
  ) {
    const source: EventSource =
      mappingId === undefined
        ? { hook: request.hook, requestId: request.requestId }
        : { hook: request.hook, mappingId, requestId: request.requestId };
    return { source, mainSessionKey: this.config.mainSessionKey, allowUnsafe, contentSource };
  }
}

function failedOutcome(error: unknown): DispatchOutcome {
  const hookError = toHookError(error);
  return { status: hookError.status, body: hookError.toJSON(), plans: [], error: hookError };
}

function statusOf(plan: ActionPlan): number {
  return plan.response.kind === "agent" ? 202 : 200;
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

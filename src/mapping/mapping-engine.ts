/** @module The mapping engine: picks the first matching mapping, renders it, runs its transform, validates the actions. */
import * as v from "valibot";
import { type HookActionOverride, HookActionOverrideSchema } from "../actions/action-schemas.js";
import {
  type ActionPolicy,
  type ChoiceOrigins,
  type HookAction,
  invalidPayload,
  validateAgentAction,
  validateWakeAction,
} from "../actions/validate-action.js";
import type { Clock } from "../clock.js";
import { HookError, isHookError, payloadTooLarge } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { CompiledMapping, FixedResponse } from "./compile-mappings.js";
import type {
  MappedAction,
  MappedRequest,
  MappingClaim,
  MappingResult,
  MappingTrace,
  RenderedResponse,
} from "./engine-types.js";
import type { MappingIndex } from "./mapping-index.js";
import { headerMismatch, payloadMismatch } from "./match-predicates.js";
import { MAX_FAN_OUT } from "./presets.js";
import { mergeOverride, renderFields, templatedBody } from "./render-action.js";
import type { TemplateContext } from "./template.js";
import type { TransformRunner } from "./transform-runner.js";
import type { TransformResult } from "./transform-types.js";

interface IndexedClaim extends MappingClaim {
  candidates: readonly CompiledMapping[];
}

export interface MappingEngineOptions {
  index: MappingIndex;
  transforms: TransformRunner;
  policy: ActionPolicy;
  logger: HostLogger;
  clock: Clock;
}

function payloadSource(body: unknown): unknown {
  return body !== null && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>).source
    : undefined;
}

/** Whether `mapping` owns the request, and in words why (replay prints the reason). */
export function matchMapping(
  mapping: CompiledMapping,
  request: { hook: string; body: unknown; headers: Readonly<Record<string, string>> },
): { matched: boolean; reason: string } {
  const { hook, body } = request;
  if (mapping.matchPath !== undefined && mapping.matchPath !== hook) {
    return { matched: false, reason: `path is "${hook}", mapping wants "${mapping.matchPath}"` };
  }
  if (mapping.matchSource !== undefined) {
    const source = payloadSource(body);
    if (source !== mapping.matchSource) {
      const seen = typeof source === "string" ? `"${source}"` : "missing";
      return { matched: false, reason: `payload source is ${seen}, mapping wants "${mapping.matchSource}"` };
    }
  }
  const mismatch =
    (mapping.matchHeaders && headerMismatch(mapping.matchHeaders, request.headers)) ||
    (mapping.matchPayload && payloadMismatch(mapping.matchPayload, body));
  if (mismatch) return { matched: false, reason: mismatch };
  const predicates = [
    mapping.matchPath !== undefined ? `path "${mapping.matchPath}"` : undefined,
    mapping.matchSource !== undefined ? `source "${mapping.matchSource}"` : undefined,
    ...(mapping.matchHeaders ?? []).map((predicate) => `header ${predicate.name}`),
    ...(mapping.matchPayload ?? []).map((predicate) => `payload ${predicate.path}`),
  ].filter(Boolean);
  return {
    matched: true,
    reason: predicates.length > 0 ? `matched ${predicates.join(" and ")}` : "catch-all",
  };
}

const mappingFailed = (mapping: CompiledMapping, cause: unknown) =>
  new HookError("MAPPING_FAILED", `The mapping "${mapping.id}" failed; the gateway log has the reason.`, {
    cause,
  });

export class MappingEngine {
  constructor(private readonly options: MappingEngineOptions) {}

  /** Whether any mapping may own `hook`: the O(1) index lookup done before the body is read. */
  claim(hook: string): IndexedClaim | undefined {
    const candidates = this.options.index.candidates(hook);
    if (!candidates) return undefined;
    return { hook, maxBodyBytes: this.options.index.maxBodyBytes(hook), candidates };
  }

  /**
   * The first matching candidate's actions; failures come back as results, never as rejections. `admit` is asked
   * about the winner before anything of it runs (the pipeline's rate limit): what it throws is the result.
   */
  async run(
    claim: MappingClaim,
    request: MappedRequest,
    admit?: (winner: CompiledMapping) => Promise<void>,
  ): Promise<MappingResult> {
    const trace: MappingTrace = { candidates: [], rendered: [], transformOutput: [] };
    const candidates = (claim as IndexedClaim).candidates ?? this.options.index.candidates(claim.hook) ?? [];
    let winner: CompiledMapping | undefined;
    for (const mapping of candidates) {
      const verdict = matchMapping(mapping, request);
      trace.candidates.push({ id: mapping.id, ...verdict });
      if (verdict.matched) {
        winner = mapping;
        break;
      }
    }
    if (!winner) {
      const error = new HookError("NOT_FOUND", "No mapping matches this hook and payload.");
      return { ok: false, mappingId: undefined, error, trace };
    }
    trace.mappingId = winner.id;
    if (request.bodyBytes > winner.maxBodyBytes) {
      // The claim allowed the largest limit of every candidate; the owner's own limit is the one that counts.
      return { ok: false, mappingId: winner.id, error: payloadTooLarge(winner.maxBodyBytes), trace };
    }
    try {
      await admit?.(winner);
      const actions = await this.execute(winner, request, trace);
      const result: MappingResult = {
        ok: true,
        mappingId: winner.id,
        actions,
        trace,
        waitForCompletion: winner.waitForCompletion,
      };
      if (winner.response) result.response = this.renderResponse(winner.response, request);
      return result;
    } catch (thrown) {
      return this.failure(winner, request, trace, thrown);
    }
  }

  /** The mapping's fixed answer, its body rendered against the whole request. */
  private renderResponse(response: FixedResponse, request: MappedRequest): RenderedResponse {
    const context = templateContext(request, request.body, this.isoNow());
    return {
      status: response.status,
      contentType: response.contentType,
      body: response.status === 204 ? undefined : (response.body?.render(context) ?? ""),
    };
  }

  private isoNow(): string {
    return new Date(this.options.clock.now()).toISOString();
  }

  private failure(
    mapping: CompiledMapping,
    request: MappedRequest,
    trace: MappingTrace,
    thrown: unknown,
  ): MappingResult {
    const error = isHookError(thrown) ? thrown : mappingFailed(mapping, thrown);
    if (error.code === "MAPPING_FAILED") {
      const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
      this.options.logger.error(`mapping "${mapping.id}" failed: ${cause}`, {
        requestId: request.requestId,
        mappingId: mapping.id,
        module: mapping.transform?.module,
      });
    }
    return { ok: false, mappingId: mapping.id, error, trace };
  }

  /** One action per payload (one, or one per forEach item), each rendered, transformed and validated. */
  private async execute(
    mapping: CompiledMapping,
    request: MappedRequest,
    trace: MappingTrace,
  ): Promise<MappedAction[]> {
    if (mapping.bodySchema) checkBodyShape(mapping.bodySchema, request.body);
    const now = this.isoNow();
    const actions: MappedAction[] = [];
    for (const payload of this.fanOut(mapping, request, trace)) {
      const context = templateContext(request, payload, now);
      const rendered = renderFields(mapping, context);
      trace.rendered.push(rendered);
      let output: TransformResult;
      if (mapping.transform) {
        try {
          output = await this.options.transforms.run(mapping.transform, {
            ...context,
            url: request.url,
            rawBody: request.rawBody,
            mapping: { id: mapping.id },
          });
        } catch (error) {
          throw mappingFailed(mapping, error);
        }
        trace.transformOutput.push(output);
      }
      const action = this.actionFrom(mapping, rendered, output, mapping.transform !== undefined);
      if (action) actions.push(action);
    }
    return actions;
  }

  /** The transform's output merged over the rendered fields, then validated into an action. */
  private actionFrom(
    mapping: CompiledMapping,
    rendered: Record<string, string | undefined>,
    output: TransformResult,
    transformed: boolean,
  ): MappedAction | undefined {
    let body = templatedBody(mapping, rendered);
    let callerKey =
      mapping.templates.sessionKey?.dynamic === true && mapping.presetSessionKeyPrefix === undefined;
    let fromTransform = false;
    let callerAgent = false;
    if (transformed) {
      if (output === null) return undefined;
      if (output !== undefined) {
        const parsed = v.safeParse(HookActionOverrideSchema, output);
        if (!parsed.success) {
          throw mappingFailed(
            mapping,
            new Error(`transform returned an invalid action: ${v.summarize(parsed.issues)}`),
          );
        }
        body = mergeOverride(body, parsed.output);
        if (parsed.output.sessionKey !== undefined) callerKey = true;
        if (parsed.output.agentId !== undefined) callerAgent = true;
        fromTransform = true;
      }
    }
    return {
      action: this.validate(
        mapping,
        body,
        { sessionKey: callerKey ? "caller" : "operator", agentId: callerAgent ? "caller" : "operator" },
        fromTransform,
      ),
      allowUnsafe: mapping.allowUnsafe,
      contentSource: mapping.contentSource,
      instructions: mapping.instructions,
    };
  }

  /** One payload per forEach item (the array replaced by `[item]`), at most MAX_FAN_OUT. */
  private fanOut(mapping: CompiledMapping, request: MappedRequest, trace: MappingTrace): unknown[] {
    if (mapping.forEach === undefined) return [request.body];
    const body = request.body;
    if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
    const items = (body as Record<string, unknown>)[mapping.forEach];
    if (!Array.isArray(items) || items.length === 0) return [];
    if (items.length > MAX_FAN_OUT) {
      trace.dropped = items.length - MAX_FAN_OUT;
      this.options.logger.warn(
        `mapping "${mapping.id}": ${items.length} items in "${mapping.forEach}", only the first ${MAX_FAN_OUT} are used`,
        { requestId: request.requestId, mappingId: mapping.id, dropped: trace.dropped },
      );
    }
    const key = mapping.forEach;
    return items.slice(0, MAX_FAN_OUT).map((item) => ({ ...body, [key]: [item] }));
  }

  private validate(
    mapping: CompiledMapping,
    body: HookActionOverride,
    origins: ChoiceOrigins,
    fromTransform: boolean,
  ): HookAction {
    try {
      if (body.kind === "wake") {
        const wake = { text: body.text, mode: body.mode, agentId: body.agentId };
        return validateWakeAction(wake, this.options.policy.agents, origins.agentId);
      }
      return validateAgentAction(body, this.options.policy, origins);
    } catch (error) {
      // An invalid action written by a transform is the mapping's bug; policy refusals keep their own codes.
      if (fromTransform && isHookError(error) && error.code === "INVALID_PAYLOAD") {
        throw mappingFailed(mapping, new Error(`transform produced an invalid action: ${error.message}`));
      }
      throw error;
    }
  }
}

/** What templates see of a request, for one payload (the body, or one forEach item's view of it). */
function templateContext(request: MappedRequest, payload: unknown, now: string): TemplateContext {
  return { payload, headers: request.headers, query: request.query, path: request.hook, now };
}

function checkBodyShape(schema: v.GenericSchema, body: unknown): void {
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw invalidPayload(parsed.issues, "The payload does not have the expected shape");
}

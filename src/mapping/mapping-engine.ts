/** @module The mapping engine: picks the first matching mapping, renders it, runs its transform, validates the actions. */
import * as v from "valibot";
import { type HookActionOverride, HookActionOverrideSchema } from "../actions/action-schemas.js";
import {
  type ActionPolicy,
  type HookAction,
  invalidPayload,
  validateAgentAction,
  validateWakeAction,
} from "../actions/validate-action.js";
import type { HostLogger } from "../host/contract.js";
import { HookError, isHookError } from "../http/errors.js";
import { tooLarge } from "../http/read-body.js";
import { callTransform } from "./call-transform.js";
import type { CompiledMapping } from "./compile-mappings.js";
import type {
  MappedAction,
  MappedRequest,
  MappingClaim,
  MappingEngine,
  MappingResult,
  MappingTrace,
} from "./engine-types.js";
import type { MappingIndex } from "./mapping-index.js";
import { MAX_FAN_OUT } from "./presets.js";
import { mergeOverride, renderFields, templatedBody } from "./render-action.js";
import type { TransformLoader } from "./transform-loader.js";
import type { HookTransform } from "./transform-types.js";

interface IndexedClaim extends MappingClaim {
  candidates: readonly CompiledMapping[];
}

export interface MappingEngineOptions {
  index: MappingIndex;
  mappings: readonly CompiledMapping[];
  loader: TransformLoader;
  policy: ActionPolicy;
  logger: HostLogger;
  transformTimeoutMs: number;
}

function payloadSource(body: unknown): unknown {
  return body !== null && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>).source
    : undefined;
}

/** Whether `mapping` owns the request, and in words why (replay prints the reason). */
export function matchMapping(
  mapping: CompiledMapping,
  hook: string,
  body: unknown,
): { matched: boolean; reason: string } {
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
  const predicates = [
    mapping.matchPath !== undefined ? `path "${mapping.matchPath}"` : undefined,
    mapping.matchSource !== undefined ? `source "${mapping.matchSource}"` : undefined,
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

export class DefaultMappingEngine implements MappingEngine {
  constructor(private readonly options: MappingEngineOptions) {}

  claim(hook: string): IndexedClaim | undefined {
    const candidates = this.options.index.candidates(hook);
    if (!candidates) return undefined;
    return { hook, maxBodyBytes: this.options.index.maxBodyBytes(hook), candidates };
  }

  /** Every mapping's verdict for a request, claimed or not: what replay shows as "why others did not match". */
  explain(hook: string, body: unknown): MappingTrace["candidates"] {
    return this.options.mappings.map((mapping) => ({ id: mapping.id, ...matchMapping(mapping, hook, body) }));
  }

  async run(claim: MappingClaim, request: MappedRequest): Promise<MappingResult> {
    const trace: MappingTrace = { candidates: [], rendered: [], transformOutput: [] };
    const candidates = (claim as IndexedClaim).candidates ?? this.options.index.candidates(claim.hook) ?? [];
    let winner: CompiledMapping | undefined;
    for (const mapping of candidates) {
      const verdict = matchMapping(mapping, request.hook, request.body);
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
      return { ok: false, mappingId: winner.id, error: tooLarge(winner.maxBodyBytes), trace };
    }
    try {
      const actions = await this.execute(winner, request, trace);
      return { ok: true, mappingId: winner.id, actions, trace };
    } catch (thrown) {
      const error = isHookError(thrown) ? thrown : mappingFailed(winner, thrown);
      if (error.code === "MAPPING_FAILED") {
        const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
        this.options.logger.error(`mapping "${winner.id}" failed: ${cause}`, {
          requestId: request.requestId,
          mappingId: winner.id,
          module: winner.transform?.module,
        });
      }
      return { ok: false, mappingId: winner.id, error, trace };
    }
  }

  private async execute(
    mapping: CompiledMapping,
    request: MappedRequest,
    trace: MappingTrace,
  ): Promise<MappedAction[]> {
    if (mapping.bodySchema) checkBodyShape(mapping.bodySchema, request.body);
    const payloads = this.fanOut(mapping, request, trace);
    if (payloads.length === 0) return [];
    const transform = mapping.transform ? await this.loadTransform(mapping) : undefined;
    const now = new Date().toISOString();
    const actions: MappedAction[] = [];
    for (const payload of payloads) {
      const context = { payload, headers: request.headers, query: request.query, path: request.hook, now };
      const rendered = renderFields(mapping, context);
      trace.rendered.push(rendered);
      let body = templatedBody(mapping, rendered);
      let callerKey =
        mapping.templates.sessionKey?.dynamic === true && mapping.presetSessionKeyPrefix === undefined;
      let fromTransform = false;
      if (transform) {
        const output = await callTransform(
          transform,
          { ...context, url: request.url, mapping: { id: mapping.id } },
          this.options.transformTimeoutMs,
        ).catch((error: unknown) => {
          throw mappingFailed(mapping, error);
        });
        trace.transformOutput.push(output);
        if (output === null) continue;
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
          fromTransform = true;
        }
      }
      actions.push({
        action: this.validate(mapping, body, callerKey, fromTransform),
        allowUnsafe: mapping.allowUnsafe,
        contentSource: mapping.contentSource,
      });
    }
    return actions;
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

  private async loadTransform(mapping: CompiledMapping): Promise<HookTransform> {
    const transform = mapping.transform!;
    try {
      return await this.options.loader.loadTransform(transform);
    } catch (error) {
      throw mappingFailed(mapping, error);
    }
  }

  private validate(
    mapping: CompiledMapping,
    body: HookActionOverride,
    callerKey: boolean,
    fromTransform: boolean,
  ): HookAction {
    try {
      if (body.kind === "wake") return validateWakeAction({ text: body.text, mode: body.mode });
      return validateAgentAction(body, this.options.policy, callerKey ? "caller" : "operator");
    } catch (error) {
      // An invalid action written by a transform is the mapping's bug; policy refusals keep their own codes.
      if (fromTransform && isHookError(error) && error.code === "INVALID_PAYLOAD") {
        throw mappingFailed(mapping, new Error(`transform produced an invalid action: ${error.message}`));
      }
      throw error;
    }
  }
}

function checkBodyShape(schema: v.GenericSchema, body: unknown): void {
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw invalidPayload(parsed.issues, "The payload does not have the expected shape");
}

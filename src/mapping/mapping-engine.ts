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
import { DeadlineSweeper } from "../deadline-sweeper.js";
import type { HostLogger } from "../host/contract.js";
import { HookError, isHookError } from "../http/errors.js";
import { tooLarge } from "../http/read-body.js";
import { isoNow } from "../iso-clock.js";
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
import type { HookTransform, TransformContext, TransformResult } from "./transform-types.js";

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
  // One timer for the deadlines of every asynchronous transform call.
  private readonly deadlines: DeadlineSweeper;

  constructor(private readonly options: MappingEngineOptions) {
    // Checked 32 times per timeout: a 5 s limit is enforced within about 160 ms.
    this.deadlines = DeadlineSweeper.forTimeout(options.transformTimeoutMs, 32);
  }

  claim(hook: string): IndexedClaim | undefined {
    const candidates = this.options.index.candidates(hook);
    if (!candidates) return undefined;
    return { hook, maxBodyBytes: this.options.index.maxBodyBytes(hook), candidates };
  }

  /** Every mapping's verdict for a request, claimed or not: what replay shows as "why others did not match". */
  explain(hook: string, body: unknown): MappingTrace["candidates"] {
    return this.options.mappings.map((mapping) => ({ id: mapping.id, ...matchMapping(mapping, hook, body) }));
  }

  /** Synchronous when the winner needs no waiting (templates, or a loaded synchronous transform). */
  run(claim: MappingClaim, request: MappedRequest): MappingResult | Promise<MappingResult> {
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
    const mapping = winner;
    trace.mappingId = mapping.id;
    if (request.bodyBytes > mapping.maxBodyBytes) {
      // The claim allowed the largest limit of every candidate; the owner's own limit is the one that counts.
      return { ok: false, mappingId: mapping.id, error: tooLarge(mapping.maxBodyBytes), trace };
    }
    const succeeded = (actions: MappedAction[]): MappingResult => ({
      ok: true,
      mappingId: mapping.id,
      actions,
      trace,
    });
    const failed = (thrown: unknown): MappingResult => this.failure(mapping, request, trace, thrown);
    try {
      const actions = this.execute(mapping, request, trace);
      return actions instanceof Promise ? actions.then(succeeded, failed) : succeeded(actions);
    } catch (thrown) {
      return failed(thrown);
    }
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

  private execute(
    mapping: CompiledMapping,
    request: MappedRequest,
    trace: MappingTrace,
  ): MappedAction[] | Promise<MappedAction[]> {
    if (mapping.bodySchema) checkBodyShape(mapping.bodySchema, request.body);
    const payloads = this.fanOut(mapping, request, trace);
    if (payloads.length === 0) return [];
    const run = new MappingRun(this, mapping, request, trace, payloads);
    if (!mapping.transform) return run.withoutTransform();
    let transform: HookTransform | Promise<HookTransform>;
    try {
      transform = this.options.loader.transformFor(mapping.transform);
    } catch (error) {
      throw mappingFailed(mapping, error);
    }
    if (!(transform instanceof Promise)) return run.withTransform(transform, 0, []);
    return transform.then(
      (loaded) => run.withTransform(loaded, 0, []),
      (error: unknown) => {
        throw mappingFailed(mapping, error);
      },
    );
  }

  /** The context a transform or a template sees for one payload. */
  context(request: MappedRequest, payload: unknown, now: string) {
    return { payload, headers: request.headers, query: request.query, path: request.hook, now };
  }

  /** Calls the transform; a failure or a timeout becomes the mapping's failure. */
  callTransform(
    mapping: CompiledMapping,
    transform: HookTransform,
    context: TransformContext,
  ): TransformResult | Promise<TransformResult> {
    let output: TransformResult | Promise<TransformResult>;
    try {
      output = callTransform(transform, context, this.options.transformTimeoutMs, this.deadlines);
    } catch (error) {
      throw mappingFailed(mapping, error);
    }
    if (!(output instanceof Promise)) return output;
    return output.catch((error: unknown) => {
      throw mappingFailed(mapping, error);
    });
  }

  /** The transform's output merged over the rendered fields, then validated into an action. */
  actionFrom(
    mapping: CompiledMapping,
    rendered: Record<string, string | undefined>,
    output: TransformResult,
    transformed: boolean,
  ): MappedAction | undefined {
    let body = templatedBody(mapping, rendered);
    let callerKey =
      mapping.templates.sessionKey?.dynamic === true && mapping.presetSessionKeyPrefix === undefined;
    let fromTransform = false;
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
        fromTransform = true;
      }
    }
    return {
      action: this.validate(mapping, body, callerKey, fromTransform),
      allowUnsafe: mapping.allowUnsafe,
      contentSource: mapping.contentSource,
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

/**
 * One request's walk over its payloads (one, or one per forEach item). It stays synchronous until a
 * transform returns a promise, and only then continues asynchronously from that item on.
 */
class MappingRun {
  private readonly now = isoNow();

  constructor(
    private readonly engine: DefaultMappingEngine,
    private readonly mapping: CompiledMapping,
    private readonly request: MappedRequest,
    private readonly trace: MappingTrace,
    private readonly payloads: readonly unknown[],
  ) {}

  withoutTransform(): MappedAction[] {
    const actions: MappedAction[] = [];
    for (const payload of this.payloads) {
      const rendered = this.render(this.engine.context(this.request, payload, this.now));
      const action = this.engine.actionFrom(this.mapping, rendered, undefined, false);
      if (action) actions.push(action);
    }
    return actions;
  }

  withTransform(
    transform: HookTransform,
    from: number,
    actions: MappedAction[],
  ): MappedAction[] | Promise<MappedAction[]> {
    for (let i = from; i < this.payloads.length; i++) {
      const context = this.engine.context(this.request, this.payloads[i], this.now);
      const rendered = this.render(context);
      const output = this.engine.callTransform(this.mapping, transform, {
        ...context,
        url: this.request.url,
        mapping: { id: this.mapping.id },
      });
      if (output instanceof Promise) {
        return output.then((settled) => {
          this.collect(actions, rendered, settled);
          return this.withTransform(transform, i + 1, actions);
        });
      }
      this.collect(actions, rendered, output);
    }
    return actions;
  }

  private render(context: ReturnType<DefaultMappingEngine["context"]>): Record<string, string | undefined> {
    const rendered = renderFields(this.mapping, context);
    this.trace.rendered.push(rendered);
    return rendered;
  }

  private collect(
    actions: MappedAction[],
    rendered: Record<string, string | undefined>,
    output: TransformResult,
  ): void {
    this.trace.transformOutput.push(output);
    const action = this.engine.actionFrom(this.mapping, rendered, output, true);
    if (action) actions.push(action);
  }
}

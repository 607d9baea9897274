/** @module Compiles mappings once at startup: templates parsed, transforms located, presets appended. */
import * as v from "valibot";
import type { ConfigIssue } from "../config/issues.js";
import type { RateLimit } from "../config/limits-schema.js";
import {
  type MappingConfig,
  MappingSchema,
  TEMPLATE_FIELDS,
  type TemplateField,
} from "../config/mapping-schema.js";
import type { ResolvedHooksConfig } from "../config/resolve.js";
import type { ExternalSource } from "../safety/wrap-external.js";
import type { SessionMode, WakeMode } from "../vocabulary.js";
import { checkStaticFields } from "./check-static-fields.js";
import { compileVerify, type PathVerification, sameVerify } from "./compile-verify.js";
import {
  compileHeaderPredicates,
  compilePayloadPredicates,
  type HeaderPredicate,
  type PayloadPredicate,
} from "./match-predicates.js";
import { presetDefinition } from "./presets.js";
import { type CompiledTemplate, compileTemplate } from "./template.js";
import { checkTransformPath } from "./transform-loader.js";
import type { TransformRef } from "./transform-types.js";

export { TEMPLATE_FIELDS, type TemplateField } from "../config/mapping-schema.js";

const RESERVED_NAMES = new Set(["wake", "agent"]);
/** What a URL path may hold unencoded (RFC 3986 pchar and `/`), or percent-encoded bytes. */
const AS_SENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})+$/;

export interface CompiledMapping {
  id: string;
  /** Position in resolution order: user mappings, then presets. */
  order: number;
  /** Where it came from, for messages: `hooks.mappings[2]` or `hooks.presets[0]`. */
  configPath: string;
  matchPath?: string;
  matchSource?: string;
  matchHeaders?: readonly HeaderPredicate[];
  matchPayload?: readonly PayloadPredicate[];
  action: "wake" | "agent";
  wakeMode: WakeMode;
  deliver: boolean;
  channel: string;
  timeoutSeconds: number;
  sessionMode: SessionMode;
  /** The operator's fixed target agent; unset: the default agent. */
  agentId?: string;
  templates: Partial<Record<TemplateField, CompiledTemplate>>;
  transform?: TransformRef;
  forEach?: string;
  maxBodyBytes: number;
  /** Its agent turns that run at once: its own `maxConcurrentTurns`, else `hooks.limits.default`'s. */
  maxConcurrentTurns: number;
  /** Its agent turns that may wait for a slot: its own `maxQueuedTurns`, else `hooks.limits.default`'s. */
  maxQueuedTurns: number;
  allowUnsafe: boolean;
  contentSource: ExternalSource;
  /** The operator's text before the wrapped content (`instructions`), trimmed; undefined when unset or empty. */
  instructions: string | undefined;
  /** Shape the payload must have before anything renders (presets). */
  bodySchema?: v.GenericSchema;
  /** Presets: the key template is the operator's; rendering just this prefix means "no key" (see presets.ts). */
  presetSessionKeyPrefix?: string;
  /** A fixed success answer instead of the JSON body. */
  response?: FixedResponse;
  /** `response: "completion"`: an agent action's answer waits for the turn's outcome. */
  waitForCompletion: boolean;
  /** The rate limit in force: the mapping's own, else `hooks.limits.default`'s; undefined: none. */
  rateLimit: RateLimit | undefined;
  /** The source allow-list in force, as written: the mapping's own, else `hooks.limits.default`'s; undefined: any source. */
  allowFrom: readonly string[] | undefined;
}

/** A mapping's fixed success answer; its body is a template. */
export interface FixedResponse {
  status: 200 | 202 | 204;
  contentType: string;
  body: CompiledTemplate | undefined;
}

export interface CompileResult {
  mappings: CompiledMapping[];
  /** Hook paths whose mappings declare how their sender signs. */
  signedPaths: Map<string, PathVerification>;
  issues: ConfigIssue[];
}

const DEFAULT_RESPONSE_TYPE = "text/plain; charset=utf-8";

function compileOne(
  mapping: MappingConfig,
  order: number,
  configPath: string,
  config: ResolvedHooksConfig,
  issues: ConfigIssue[],
): CompiledMapping {
  const compiled = createCompiledMapping(mapping, order, configPath, config);
  compileMatch(mapping, compiled, issues);
  checkCompletionAnswer(mapping, compiled, issues);
  if (typeof mapping.response === "object")
    compiled.response = compileFixedResponse(mapping.response, configPath, issues);
  if (mapping.forEach !== undefined) compiled.forEach = mapping.forEach;
  if (mapping.agentId !== undefined) compiled.agentId = mapping.agentId;
  compiled.templates = compileTemplates(mapping, configPath, issues);
  checkStaticFields(mapping, compiled.templates, config, configPath, issues);
  if (mapping.transform) {
    const transform = locateTransform(mapping.transform, config.transformsDir, configPath, issues);
    if (transform) compiled.transform = transform;
  }
  return compiled;
}

/** The mapping's settings as they are, its limits falling back to `hooks.limits.default` and the hooks' own. */
function createCompiledMapping(
  mapping: MappingConfig,
  order: number,
  configPath: string,
  config: ResolvedHooksConfig,
): CompiledMapping {
  return {
    id: mapping.id ?? `mapping-${order}`,
    order,
    configPath,
    action: mapping.action,
    wakeMode: mapping.wakeMode,
    deliver: mapping.deliver,
    channel: mapping.channel,
    timeoutSeconds: mapping.timeoutSeconds,
    sessionMode: mapping.sessionMode,
    templates: {},
    maxBodyBytes: mapping.maxBodyBytes ?? config.maxBodyBytes,
    maxConcurrentTurns: mapping.maxConcurrentTurns ?? config.limits.default.maxConcurrentTurns,
    maxQueuedTurns: mapping.maxQueuedTurns ?? config.limits.default.maxQueuedTurns,
    allowUnsafe: mapping.allowUnsafeExternalContent,
    contentSource: "Webhook",
    // Always set, so every compiled mapping has one shape (the engine reads it per request).
    instructions: mapping.instructions?.trim() || undefined,
    waitForCompletion: mapping.response === "completion" || mapping.respond === "completion",
    rateLimit: mapping.rateLimit ?? config.limits.default?.rateLimit,
    allowFrom: mapping.allowFrom ?? config.limits.default.allowFrom,
  };
}

/** Sets what a request must match: its hook path (checked), source, headers and payload predicates. */
function compileMatch(mapping: MappingConfig, compiled: CompiledMapping, issues: ConfigIssue[]): void {
  const { configPath } = compiled;
  const matchPath = mapping.match?.path?.replace(/^\/+|\/+$/g, "");
  if (matchPath !== undefined) {
    checkMatchPath(matchPath, `${configPath}.match.path`, issues);
    compiled.matchPath = matchPath;
  }
  if (mapping.match?.source !== undefined) compiled.matchSource = mapping.match.source;
  if (mapping.match?.headers !== undefined)
    compiled.matchHeaders = compileHeaderPredicates(mapping.match.headers);
  if (mapping.match?.payload !== undefined)
    compiled.matchPayload = compilePayloadPredicates(mapping.match.payload, configPath, issues);
}

/** A hook name, slashes trimmed: not empty, written as a sender sends it, and not a built-in endpoint's. */
function checkMatchPath(matchPath: string, at: string, issues: ConfigIssue[]): void {
  if (matchPath === "") issues.push({ path: at, message: "must name a hook below hooks.path" });
  if (matchPath !== "" && !AS_SENT.test(matchPath)) {
    issues.push({
      path: at,
      message:
        "has characters a sender must percent-encode; hook names are matched as sent, so write them encoded (a space as %20)",
    });
  }
  if (RESERVED_NAMES.has(matchPath)) {
    issues.push({ path: at, message: `"${matchPath}" is reserved for the built-in endpoint` });
  }
}

/** A mapping answers one way, and a completion answer needs one agent turn to wait for. */
function checkCompletionAnswer(
  mapping: MappingConfig,
  compiled: CompiledMapping,
  issues: ConfigIssue[],
): void {
  const { configPath } = compiled;
  if (mapping.respond !== undefined && typeof mapping.response === "object") {
    issues.push({
      path: `${configPath}.respond`,
      message: "a mapping has one answer: a fixed response or the turn's completion, not both",
    });
  }
  const completionKey = mapping.respond === "completion" ? "respond" : "response";
  if (compiled.waitForCompletion && mapping.action === "wake" && mapping.transform === undefined) {
    issues.push({
      path: `${configPath}.${completionKey}`,
      message: 'a wake has no turn to wait for: use action "agent", or drop the completion answer',
    });
  }
  if (compiled.waitForCompletion && mapping.forEach !== undefined) {
    issues.push({
      path: `${configPath}.${completionKey}`,
      message: "cannot wait for the completion of a forEach fan-out; drop forEach or the completion answer",
    });
  }
}

function compileFixedResponse(
  response: Extract<MappingConfig["response"], object>,
  configPath: string,
  issues: ConfigIssue[],
): FixedResponse {
  const { status, contentType, body } = response;
  if (status === 204 && body !== undefined)
    issues.push({
      path: `${configPath}.response.body`,
      message: "a 204 answer has no body: remove it or use 200",
    });
  let template: CompiledTemplate | undefined;
  try {
    template = body === undefined ? undefined : compileTemplate(body);
  } catch (error) {
    issues.push({
      path: `${configPath}.response.body`,
      message: `invalid template: ${(error as Error).message}`,
    });
  }
  return { status, contentType: contentType ?? DEFAULT_RESPONSE_TYPE, body: template };
}

/** Parses each template field the mapping sets; a field that does not parse is left out and reported. */
function compileTemplates(
  mapping: MappingConfig,
  configPath: string,
  issues: ConfigIssue[],
): CompiledMapping["templates"] {
  const templates: CompiledMapping["templates"] = {};
  for (const field of TEMPLATE_FIELDS) {
    const source = mapping[field];
    if (source === undefined) continue;
    try {
      templates[field] = compileTemplate(source);
    } catch (error) {
      issues.push({
        path: `${configPath}.${field}`,
        message: `invalid template: ${(error as Error).message}`,
      });
    }
  }
  return templates;
}

/** The transform's module, located inside transformsDir; undefined (and reported) when it cannot be. */
function locateTransform(
  transform: NonNullable<MappingConfig["transform"]>,
  transformsDir: string,
  configPath: string,
  issues: ConfigIssue[],
): TransformRef | undefined {
  const located = checkTransformPath(transformsDir, transform.module);
  if (!located.ok) {
    issues.push({ path: `${configPath}.transform.module`, message: located.message });
    return undefined;
  }
  const ref: TransformRef = { module: transform.module, file: located.file, isolate: transform.isolate };
  if (transform.export !== undefined) ref.exportName = transform.export;
  return ref;
}

export function compileMappings(config: ResolvedHooksConfig): CompileResult {
  const issues: ConfigIssue[] = [];
  const mappings = config.mappings.map((mapping, index) =>
    compileOne(mapping, index, `hooks.mappings[${index}]`, config, issues),
  );
  const signedPaths = compileSignedPaths(config, mappings, issues);
  config.presets.forEach((name, index) => {
    const preset = presetDefinition(name, config.mailbox);
    const compiled = compileOne(
      v.parse(MappingSchema, preset.mapping),
      mappings.length,
      `hooks.presets[${index}]`,
      config,
      issues,
    );
    compiled.contentSource = preset.contentSource;
    if (preset.bodySchema) compiled.bodySchema = preset.bodySchema;
    if (preset.sessionKeyPrefix !== undefined) compiled.presetSessionKeyPrefix = preset.sessionKeyPrefix;
    mappings.push(compiled);
  });
  return { mappings, signedPaths, issues };
}

/**
 * A signature guards a path, not one mapping: it is checked before the body is parsed, so before payload
 * predicates can choose among the path's mappings. Every mapping of a path that declares `verify` must
 * therefore declare the same one, and a `verify` needs a `match.path`.
 */
function compileSignedPaths(
  config: ResolvedHooksConfig,
  mappings: readonly CompiledMapping[],
  issues: ConfigIssue[],
): Map<string, PathVerification> {
  const signedPaths = new Map<string, PathVerification>();
  const declared = new Map<string, { verify: NonNullable<MappingConfig["verify"]>; configPath: string }>();
  let largestTolerance = 0;
  config.mappings.forEach((mapping, index) => {
    const verify = mapping.verify;
    if (verify === undefined) return;
    const at = `hooks.mappings[${index}].verify`;
    const compiled = mappings[index]!;
    if (compiled.matchPath === undefined) {
      issues.push({ path: at, message: "needs match.path: a signature guards the path its sender calls" });
      return;
    }
    const earlier = declared.get(compiled.matchPath);
    if (earlier) {
      if (!sameVerify(earlier.verify, verify)) {
        issues.push({
          path: at,
          message: `differs from ${earlier.configPath}.verify on the same path "${compiled.matchPath}": a path has one verification`,
        });
      }
      return;
    }
    declared.set(compiled.matchPath, { verify, configPath: `hooks.mappings[${index}]` });
    largestTolerance = Math.max(largestTolerance, verify.toleranceSeconds);
    const verification = compileVerify(verify, at, issues);
    if (verification) {
      signedPaths.set(compiled.matchPath, {
        ...verification,
        mappingId: compiled.id,
        configPath: `hooks.mappings[${index}]`,
      });
    }
  });
  if (config.dedupe.windowSeconds < 2 * largestTolerance) {
    issues.push({
      path: "hooks.dedupe.windowSeconds",
      message: `must be at least twice the largest verify.toleranceSeconds (${2 * largestTolerance}), or a replayed delivery could outlive its id`,
    });
  }
  return signedPaths;
}

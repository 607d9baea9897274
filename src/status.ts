/** @module What the intake answers at, as data for hosts: endpoints, mappings and transform load status (banner, `hooks check`). */
import type { RateLimit } from "./config/limits-schema.js";
import type { ResolvedHooksConfig } from "./config/resolve.js";
import type { CompiledMapping } from "./mapping/compile-mappings.js";
import type { PathVerification } from "./mapping/compile-verify.js";
import type { TransformLoadReport } from "./prepare-hooks.js";
import { describeRedisUrl } from "./store/redis-url.js";

export interface MappingSummary {
  id: string;
  /** Where it is configured: `hooks.mappings[2]` or `hooks.presets[0]`. */
  configPath: string;
  matchPath?: string;
  matchSource?: string;
  /** Header and payload predicates, as `name=value|value` (values are config, never request data). */
  matchHeaders?: string[];
  matchPayload?: string[];
  /** The signature scheme that guards the mapping's path (never its secret). */
  verify?: string;
  /** Whether that path takes the hook token too (`verify.tokenAlso`). */
  verifyTokenAlso?: boolean;
  action: "wake" | "agent";
  /** Where the action comes from. */
  builder: "template" | "transform" | "preset";
  transform?: { module: string; export?: string };
  /** The length of its `instructions` (the operator's text before the wrapped content), when it has some. */
  instructionsChars?: number;
  /** `loaded` / `failed` once the transform was tried; absent before, or for mappings without one. */
  transformStatus?: "loaded" | "failed";
  transformError?: string;
  /** The rate limit in force (its own, else `hooks.limits.default`'s), when there is one. */
  rateLimit?: RateLimit;
}

export interface HooksStatus {
  enabled: boolean;
  /** `hooks.path`, normalised. */
  path: string;
  /** How long a body may take to arrive (`hooks.bodyTimeoutMs`): a host's own request timeout should exceed it. */
  bodyTimeoutMs: number;
  /** Where counters and delivery ids are kept: `memory`, or `redis <url without credentials> (keys <prefix>*)`. */
  store: string;
  /** The rate limits of `/wake` and `/agent` (their own, else `hooks.limits.default`'s), those that have one. */
  rateLimits: { wake?: RateLimit; agent?: RateLimit };
  mappings: MappingSummary[];
}

export function summarizeMapping(
  mapping: CompiledMapping,
  report?: TransformLoadReport,
  signedPaths?: ReadonlyMap<string, PathVerification>,
): MappingSummary {
  const summary: MappingSummary = {
    id: mapping.id,
    configPath: mapping.configPath,
    action: mapping.action,
    builder: mapping.transform
      ? "transform"
      : mapping.configPath.startsWith("hooks.presets")
        ? "preset"
        : "template",
  };
  if (mapping.matchPath !== undefined) summary.matchPath = mapping.matchPath;
  if (mapping.rateLimit !== undefined) summary.rateLimit = mapping.rateLimit;
  if (mapping.instructions !== undefined) summary.instructionsChars = mapping.instructions.length;
  if (mapping.matchSource !== undefined) summary.matchSource = mapping.matchSource;
  if (mapping.matchHeaders)
    summary.matchHeaders = mapping.matchHeaders.map((p) => `${p.name}=${p.values.join("|")}`);
  if (mapping.matchPayload)
    summary.matchPayload = mapping.matchPayload.map((p) => `${p.path}=${p.values.map(String).join("|")}`);
  const signed = mapping.matchPath === undefined ? undefined : signedPaths?.get(mapping.matchPath);
  if (signed) {
    summary.verify = signed.settings.scheme;
    summary.verifyTokenAlso = signed.tokenAlso;
  }
  if (mapping.transform) {
    summary.transform = { module: mapping.transform.module };
    if (mapping.transform.exportName !== undefined) summary.transform.export = mapping.transform.exportName;
  }
  if (report) {
    summary.transformStatus = report.error === undefined ? "loaded" : "failed";
    if (report.error !== undefined) summary.transformError = report.error;
  }
  return summary;
}

export function describeStatus(
  config: Pick<ResolvedHooksConfig, "enabled" | "path" | "bodyTimeoutMs" | "store" | "limits">,
  mappings: readonly CompiledMapping[],
  reports: readonly TransformLoadReport[] = [],
  signedPaths?: ReadonlyMap<string, PathVerification>,
): HooksStatus {
  const byId = new Map(reports.map((report) => [report.mappingId, report]));
  const rateLimits: HooksStatus["rateLimits"] = {};
  for (const hook of ["wake", "agent"] as const) {
    const rule = config.limits[hook]?.rateLimit ?? config.limits.default?.rateLimit;
    if (rule !== undefined) rateLimits[hook] = rule;
  }
  return {
    enabled: config.enabled,
    path: config.path,
    bodyTimeoutMs: config.bodyTimeoutMs,
    store:
      config.store.kind === "redis"
        ? `redis ${describeRedisUrl(config.store.url)} (keys ${config.store.keyPrefix}*)`
        : "memory (this process only)",
    rateLimits,
    mappings: mappings.map((mapping) => summarizeMapping(mapping, byId.get(mapping.id), signedPaths)),
  };
}

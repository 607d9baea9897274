/** @module Resolves the config and compiles the mappings in one step, collecting every problem (register, check, replay). */
import type { ConfigIssue } from "./config/issues.js";
import { type ResolveContext, type ResolvedHooksConfig, resolveHooksConfig } from "./config/resolve.js";
import { type CompiledMapping, compileMappings } from "./mapping/compile-mappings.js";
import type { TransformLoader } from "./mapping/transform-loader.js";

export interface PreparedHooks {
  config: ResolvedHooksConfig;
  mappings: CompiledMapping[];
}

export interface PrepareResult {
  prepared: PreparedHooks | undefined;
  issues: ConfigIssue[];
  warnings: string[];
}

export function prepareHooks(rawConfig: unknown, context: ResolveContext): PrepareResult {
  const resolved = resolveHooksConfig(rawConfig, context);
  if (!resolved.config) return { prepared: undefined, issues: resolved.issues, warnings: resolved.warnings };
  const compiled = compileMappings(resolved.config);
  const issues = [...resolved.issues, ...compiled.issues];
  return {
    prepared: issues.length === 0 ? { config: resolved.config, mappings: compiled.mappings } : undefined,
    issues,
    warnings: resolved.warnings,
  };
}

export interface TransformLoadReport {
  mappingId: string;
  module: string;
  error?: string;
}

/** Loads every mapping's transform once: warms the cache at start and lets `hooks check` report failures. */
export async function loadAllTransforms(
  loader: TransformLoader,
  mappings: readonly CompiledMapping[],
): Promise<TransformLoadReport[]> {
  const reports: TransformLoadReport[] = [];
  for (const mapping of mappings) {
    const transform = mapping.transform;
    if (!transform) continue;
    try {
      await loader.loadTransform(transform);
      reports.push({ mappingId: mapping.id, module: transform.module });
    } catch (error) {
      reports.push({ mappingId: mapping.id, module: transform.module, error: (error as Error).message });
    }
  }
  return reports;
}

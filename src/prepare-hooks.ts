/** @module Resolves the config and compiles the mappings in one step, collecting every problem (register, check, replay). */
import type { ConfigIssue } from "./config/issues.js";
import { type ResolveContext, type ResolvedHooksConfig, resolveHooksConfig } from "./config/resolve.js";
import { type CompiledMapping, compileMappings } from "./mapping/compile-mappings.js";
import { type PathVerification, verifyWarnings } from "./mapping/compile-verify.js";
import type { TransformRunner } from "./mapping/transform-runner.js";
import {
  transformsBesideSecretsWarning,
  urlPassword,
  variablesHolding,
} from "./safety/environment-secrets.js";

export interface PreparedHooks {
  config: ResolvedHooksConfig;
  mappings: CompiledMapping[];
  /** Hook paths whose sender signs, and how. */
  signedPaths: ReadonlyMap<string, PathVerification>;
}

/**
 * Every secret a config holds, as text that might turn up in a request: the hook token, each signing secret (a
 * Standard Webhooks key with and without its `whsec_` prefix), each verify token. Hidden wherever a listing shows a
 * request.
 */
export function* hookSecrets({ config, signedPaths }: PreparedHooks): Generator<string> {
  yield config.token;
  for (const path of signedPaths.values()) {
    for (const secret of path.settings.secrets) {
      yield secret;
      if (path.settings.scheme === "standard-webhooks") yield secret.replace(/^wh(sec|sk|pk)_/, "");
    }
    if (path.settings.verifyToken !== undefined) yield path.settings.verifyToken;
  }
}

/**
 * The warning for a config whose mappings run transforms while one of its secrets, or of the host's, is the value
 * of an environment variable: a transform runs in the gateway's process (a worker thread is not a process of its
 * own) and can read that process's environment. Undefined when no transform runs or no secret is there.
 */
export function transformsBesideSecrets(
  prepared: PreparedHooks,
  hostSecrets: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (!prepared.mappings.some((mapping) => mapping.transform !== undefined)) return undefined;
  const secrets = [...hookSecrets(prepared), ...hostSecrets];
  const { store } = prepared.config;
  // A Redis URL may carry a password, which `${VAR}` may have put there alone.
  if (store.kind === "redis") secrets.push(store.url, urlPassword(store.url) ?? "");
  const names = variablesHolding(secrets, env);
  return names.length === 0 ? undefined : transformsBesideSecretsWarning(names);
}

export interface PrepareResult {
  /** Present when the config's shape was valid, even if other problems were found (so checks can go on). */
  partial: PreparedHooks | undefined;
  /** Present only when there is no problem at all. */
  prepared: PreparedHooks | undefined;
  issues: ConfigIssue[];
  warnings: string[];
  /** The gateway config with its secrets read (see `ResolveResult.read`). */
  read: unknown;
}

/**
 * `adjust` may change the resolved config before the mappings are compiled against it (a reload keeps the
 * running values of the fields a restart must apply).
 */
export function prepareHooks(
  rawConfig: unknown,
  context: ResolveContext,
  adjust: (config: ResolvedHooksConfig) => ResolvedHooksConfig = (config) => config,
): PrepareResult {
  const resolved = resolveHooksConfig(rawConfig, context);
  if (!resolved.config) {
    return {
      partial: undefined,
      prepared: undefined,
      issues: resolved.issues,
      warnings: resolved.warnings,
      read: resolved.read,
    };
  }
  const config = adjust(resolved.config);
  const compiled = compileMappings(config);
  const issues = [...resolved.issues, ...compiled.issues];
  const partial = { config, mappings: compiled.mappings, signedPaths: compiled.signedPaths };
  return {
    partial,
    prepared: issues.length === 0 ? partial : undefined,
    issues,
    warnings: [...resolved.warnings, ...verifyWarnings(compiled.signedPaths)],
    read: resolved.read,
  };
}

export interface TransformLoadReport {
  mappingId: string;
  configPath: string;
  module: string;
  error?: string;
}

/** Loads every mapping's transform once: warms the cache at start and lets `hooks check` report failures. */
export async function loadAllTransforms(
  runner: TransformRunner,
  mappings: readonly CompiledMapping[],
): Promise<TransformLoadReport[]> {
  const reports: TransformLoadReport[] = [];
  for (const mapping of mappings) {
    const transform = mapping.transform;
    if (!transform) continue;
    const report = { mappingId: mapping.id, configPath: mapping.configPath, module: transform.module };
    try {
      await runner.load(transform);
      reports.push(report);
    } catch (error) {
      reports.push({ ...report, error: (error as Error).message });
    }
  }
  return reports;
}

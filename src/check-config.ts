/** @module `checkHooksConfig`: every problem of the plugin's config in one round, transforms loaded, for `hooks check`. */
import type { ConfigIssue } from "./config/issues.js";
import type { ResolveContext } from "./config/resolve.js";
import { createTransformRunner } from "./mapping/create-transform-runner.js";
import { DEFAULT_RELOAD_CHECK_MS } from "./mapping/transform-loader.js";
import { TRANSFORM_TIMEOUT_MS } from "./mapping/transform-runner.js";
import { NO_METRICS } from "./metrics/metrics.js";
import { loadAllTransforms, prepareHooks, transformsBesideSecrets } from "./prepare-hooks.js";
import { describeStatus, type HooksStatus } from "./status.js";
import { probeRedis } from "./store/redis.js";

export interface HooksCheck {
  /** Config problems and transforms that fail to load, each with its config path. */
  issues: ConfigIssue[];
  warnings: string[];
  /** Undefined when the config's shape is too broken to say what would be served. */
  status: HooksStatus | undefined;
}

/**
 * Resolves the config once, compiles every mapping and loads every transform, even when some of them are broken.
 * `hostSecrets` are the host's own (a metrics token), named with the config's when transforms run beside them.
 */
export async function checkHooksConfig(
  rawConfig: unknown,
  context: ResolveContext,
  hostSecrets: readonly string[] = [],
): Promise<HooksCheck> {
  const result = prepareHooks(rawConfig, context);
  const partial = result.partial;
  if (!partial) return { issues: result.issues, warnings: result.warnings, status: undefined };
  // Each module is loaded where it will run: a worker transform in a worker, under the same memory limit.
  const runner = createTransformRunner({
    transformsDir: partial.config.transformsDir,
    timeoutMs: TRANSFORM_TIMEOUT_MS,
    reloadCheckMs: DEFAULT_RELOAD_CHECK_MS,
    maxMemoryMb: partial.config.transforms.maxMemoryMb,
    maxWorkers: 1,
    env: partial.config.transforms.env,
    metrics: NO_METRICS,
  });
  const reports = await loadAllTransforms(runner, partial.mappings);
  await runner.close();
  const issues = [...result.issues];
  const warnings = [...result.warnings];
  const store = partial.config.store;
  if (store.kind === "redis") {
    const { problem, problemAt, warning } = await probeRedis(store);
    if (problem !== undefined) issues.push({ path: problemAt ?? "hooks.store", message: problem });
    if (warning !== undefined) warnings.push(warning);
  }
  for (const report of reports) {
    if (report.error === undefined) continue;
    issues.push({
      path: `${report.configPath}.transform.module`,
      message: `mapping "${report.mappingId}": transform ${report.module} failed to load: ${report.error}`,
    });
  }
  const exposed = transformsBesideSecrets(partial, hostSecrets, context.env ?? process.env);
  return {
    issues,
    warnings: exposed === undefined ? warnings : [...warnings, exposed],
    status: describeStatus(partial.config, partial.mappings, reports, partial.signedPaths),
  };
}

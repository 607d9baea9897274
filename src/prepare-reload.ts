/** @module A new config checked against a running plugin instance: every problem, or the swap to it and what it changes. */
import type { ComposedHooks } from "./compose.js";
import type { ConfigIssue } from "./config/issues.js";
import { changedFields, keepRestartFields } from "./config/reload-fields.js";
import type { ResolveContext } from "./config/resolve.js";
import { createVerifiersFor, metricLabelsOf } from "./container.js";
import type { HooksPluginOptions } from "./options.js";
import { type PreparedHooks, prepareHooks, type TransformLoadReport } from "./prepare-hooks.js";
import { describeStatus, type HooksStatus } from "./status.js";
import type { Ports } from "./tokens.js";

/** What a registered instance runs on: a reload replaces `prepared` and `raw`, and keeps the rest. */
export interface RunningHooks {
  context: ResolveContext;
  prepared: PreparedHooks;
  /** The gateway config it was given, its secrets read: to tell which of its fields a reload changes. */
  raw: unknown;
  /** Absent when hooks are disabled: nothing serves, and only a restart can turn them on. */
  serving: { hooks: ComposedHooks; ports: Ports } | undefined;
}

/** A new config checked against a registered instance: its problems, or a change ready to apply. */
export interface HooksReload {
  /** Every problem found; while there is one, nothing can be applied. */
  issues: ConfigIssue[];
  /** `hooks.*` fields that changed but need a restart, as `hooks.store`: they keep their running values. */
  restartNeeded: string[];
  /** Fields of the plugin's slice that changed and apply live, by name only (`hooks.token`, `hooks.mappings`). */
  changed: string[];
  /** What the instance serves once applied; undefined when there are problems. */
  status: HooksStatus | undefined;
  /** Swaps the config in, and logs its warnings (a weak token) as registration does. Throws when there are issues. */
  apply(): void;
}

export interface CheckedReload extends Omit<HooksReload, "apply"> {
  /** Present when there is no problem: the config to run, its warnings, and the swap of the request path to it. */
  accepted?: { next: PreparedHooks; raw: unknown; warnings: string[]; swap(): void };
}

/**
 * Checks `config` as registration does, with the running values kept for the fields a restart must apply, and
 * loads its mappings' transforms into the running pool. Changes nothing: `accepted.swap()` does.
 */
export async function checkReload(
  running: RunningHooks,
  status: HooksStatus | undefined,
  config: unknown,
  options: HooksPluginOptions,
): Promise<CheckedReload> {
  let restartNeeded: string[] = [];
  const result = prepareHooks(config, running.context, (next) => {
    const kept = keepRestartFields(running.prepared.config, next);
    restartNeeded = kept.restartNeeded;
    return kept.config;
  });
  // A field a restart must apply is named there, not here: it did not change what runs.
  // Secrets compared as read: a token whose file changed is a changed `hooks.token`, named, never shown.
  const changed = changedFields(running.raw, result.read).filter((name) => !restartNeeded.includes(name));
  const refused = (issues: ConfigIssue[]): CheckedReload => ({
    issues,
    restartNeeded,
    changed,
    status: undefined,
  });
  if (!result.prepared) return refused(result.issues);
  const next = result.prepared;
  const serving = running.serving;
  if (!serving) {
    return {
      issues: [],
      restartNeeded,
      changed,
      status: describeStatus(next.config, next.mappings, [], next.signedPaths),
      accepted: { next, raw: result.read, warnings: result.warnings, swap: () => undefined },
    };
  }
  const pending = await serving.hooks.prepareSwap(next, createVerifiersFor(next, options));
  const failed = newTransformFailures(pending.reports, status);
  if (failed.length > 0) {
    return refused(
      failed.map((report) => ({
        path: `${report.configPath}.transform.module`,
        message: `failed to load: ${report.error}`,
      })),
    );
  }
  return {
    issues: [],
    restartNeeded,
    changed,
    status: describeStatus(next.config, next.mappings, pending.reports, next.signedPaths),
    accepted: {
      next,
      raw: result.read,
      warnings: result.warnings,
      swap() {
        pending.swap();
        serving.ports.metrics.allowLabels?.(metricLabelsOf(next));
      },
    },
  };
}

/**
 * A transform that fails to load stops a reload, unless the running config has the same failure (its mapping
 * answers 500, as after a start): a fix elsewhere in the file must not wait for it.
 */
function newTransformFailures(
  reports: readonly TransformLoadReport[],
  status: HooksStatus | undefined,
): TransformLoadReport[] {
  const failedBefore = new Set(
    (status?.mappings ?? [])
      .filter((mapping) => mapping.transformStatus === "failed")
      .map((mapping) => `${mapping.id} ${mapping.transform?.module}`),
  );
  return reports.filter(
    (report) => report.error !== undefined && !failedBefore.has(`${report.mappingId} ${report.module}`),
  );
}

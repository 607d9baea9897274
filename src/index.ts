/** @module The plugin: its default export for the gateway, and the types a transform author imports. */
import { createRequire } from "node:module";
import { DEFAULT_DEADLINE_GRACE_MS } from "./actions/run-completion.js";
import { ConfigError } from "./config/issues.js";
import { buildHooksContainer } from "./container.js";
import type { HookPlugin, PluginHost } from "./host/contract.js";
import { TRANSFORM_TIMEOUT_MS } from "./mapping/call-transform.js";
import { DEFAULT_RELOAD_CHECK_MS } from "./mapping/transform-loader.js";
import { loadAllTransforms, prepareHooks } from "./prepare-hooks.js";
import { type RuntimeOptions, TOKENS } from "./tokens.js";

export type { HookActionOverride } from "./actions/action-schemas.js";
export type { ConfigIssue } from "./config/issues.js";
export type { HooksConfig, HooksConfigInput } from "./config/schema.js";
export type * from "./events.js";
export type * from "./host/contract.js";
export type { HookTransform, TransformContext, TransformResult } from "./mapping/transform-types.js";
export { defineTransform } from "./mapping/transform-types.js";

// The manifest holds the generated config schema; a test keeps it equal to the valibot schema.
const manifest = createRequire(import.meta.url)("../plugin.json") as { configSchema: unknown };

export function createHooksPlugin(overrides: Partial<RuntimeOptions> = {}): HookPlugin {
  const options: RuntimeOptions = {
    runDeadlineGraceMs: overrides.runDeadlineGraceMs ?? DEFAULT_DEADLINE_GRACE_MS,
    transformTimeoutMs: overrides.transformTimeoutMs ?? TRANSFORM_TIMEOUT_MS,
    transformReloadCheckMs: overrides.transformReloadCheckMs ?? DEFAULT_RELOAD_CHECK_MS,
  };
  return {
    id: "hooks",
    name: "Webhook intake",
    configSchema: manifest.configSchema,
    register(host: PluginHost) {
      const result = prepareHooks(host.config, {
        configDir: host.configDir ?? process.cwd(),
        mainSessionKey: host.mainSessionKey,
        channels: host.channels,
      });
      if (result.issues.length > 0 || !result.prepared) throw new ConfigError(result.issues);
      for (const warning of result.warnings) host.logger.warn(warning);
      const { config, mappings } = result.prepared;
      if (!config.enabled) {
        host.logger.info("hooks are disabled (set hooks.enabled to true to expose the intake)");
        return;
      }
      const container = buildHooksContainer({
        config,
        mappings,
        logger: host.logger,
        bus: host.bus,
        options,
        capture: host.captureRequest?.bind(host),
      });
      host.registerHttpRoute({
        path: config.path,
        match: "prefix",
        auth: "plugin",
        handler: container.resolve(TOKENS.handler),
      });
      const tracker = container.resolve(TOKENS.tracker);
      host.registerService({
        id: "hooks",
        async start() {
          tracker.start();
          const reports = await loadAllTransforms(container.resolve(TOKENS.transformLoader), mappings);
          for (const report of reports) {
            if (report.error) {
              host.logger.error(
                `transform of mapping "${report.mappingId}" failed to load: ${report.error}`,
                {
                  mappingId: report.mappingId,
                  module: report.module,
                },
              );
            }
          }
        },
        stop() {
          tracker.stop();
        },
      });
    },
  };
}

const plugin: HookPlugin = createHooksPlugin();
export default plugin;

/** @module The plugin: its default export for a gateway's plugin loader, `createHooksPlugin` for hosts that swap ports, and the public types. */
import { createRequire } from "node:module";
import type { Registry } from "prom-client";
import type { HookPlugin, PluginHost } from "./host/contract.js";
import type { InspectorSource } from "./inspector/inspector-source.js";
import type { HooksPluginOptions } from "./options.js";
import type { AuthThrottle } from "./pipeline/credential-judge.js";
import type { HooksReload } from "./prepare-reload.js";
import { type HooksInstance, registerHooks, reloadHooks } from "./register-hooks.js";
import type { HooksStatus } from "./status.js";

/** The type `plugin.metrics()` returns: prom-client's Registry (`metrics()`, `contentType`, `Registry.merge`). */
export type { Registry as MetricsRegistry } from "prom-client";
export type { HookActionOverride } from "./actions/action-schemas.js";
export { checkHooksConfig, type HooksCheck } from "./check-config.js";
export type { Clock, Ids } from "./clock.js";
export { configuredAgents, MAIN_AGENT_ID } from "./config/agents.js";
export {
  ConfigError,
  type ConfigIssue,
  formatIssue,
  fromValibotIssues,
  isConfigError,
  withoutIssuesAt,
} from "./config/issues.js";
export type { RateLimit } from "./config/limits-schema.js";
export { type LoadedConfigFile, loadGatewayConfigFile } from "./config/load-file.js";
export { readSecrets, type SecretContext } from "./config/read-secrets.js";
export {
  type HooksConfig,
  type HooksConfigInput,
  HooksConfigSchema,
  PluginGatewayConfigSchema,
} from "./config/schema.js";
export { type SecretRef, secretField } from "./config/secret-schema.js";
export { ERROR_STATUS, type ErrorCode, HookError, isHookError } from "./errors.js";
export type * from "./events.js";
export type * from "./host/contract.js";
// The reference gateway closes the connections it refuses on its own the same way.
export { lingerAfterAnswer } from "./http/refused-linger.js";
export {
  createInspectorHandler,
  type InspectorAuth,
  type InspectorHandlerOptions,
} from "./inspector/inspector-handler.js";
export type {
  InspectorDetail,
  InspectorFilter,
  InspectorReplay,
  InspectorSource,
  InspectorSummary,
} from "./inspector/inspector-source.js";
export type {
  AdmittedRecord,
  AnsweredRecord,
  Journal,
  JournalBacklog,
  RememberedDelivery,
  UnfinishedRecord,
} from "./journal/journal.js";
export type { TransformRunner, TransformRunnerSettings } from "./mapping/transform-runner.js";
export type { HookTransform, TransformContext, TransformResult } from "./mapping/transform-types.js";
export { defineTransform } from "./mapping/transform-types.js";
export type {
  AuthFailureReason,
  HookMetrics,
  JournalPending,
  TransformOutcome,
  TurnOutcome,
} from "./metrics/metrics.js";
export type { HooksPluginOptions } from "./options.js";
export type { AuthThrottle } from "./pipeline/credential-judge.js";
export type { CapturedRequest } from "./pipeline/request.js";
export { clientGroup } from "./pipeline/stages/admit.js";
export type { HooksReload } from "./prepare-reload.js";
export { fixtureFromRequest, type RecordedRequest, writeFixtureFile } from "./replay/fixture-file.js";
// The runner of the reference gateway gives its children the same allow-list as transform workers.
export { allowListedEnv } from "./safety/child-env.js";
export type { HooksStatus, MappingSummary } from "./status.js";
export type {
  ClaimTimes,
  CounterWindow,
  DeliveryClaim,
  RememberedAnswer,
  Store,
  StoredResponse,
} from "./store/store.js";
// The tokens a host registers its own ports under, in the container it passes as `options.container`.
export { PORTS, type Ports } from "./tokens.js";
export { generateToken } from "./verify/generate-token.js";
export type { SignatureFailure } from "./verify/signature-failure.js";
export { createTokenComparer } from "./verify/token.js";
export type { AuthVerdict, Verifier, Verifiers } from "./verify/verifier.js";
export { CHANNEL_IDS, type ChannelId, checkChannel } from "./vocabulary.js";

// The manifest holds the generated config schema; a test keeps it equal to the valibot schema.
const manifest = createRequire(import.meta.url)("../plugin.json") as { configSchema: unknown };

export interface HooksPlugin extends HookPlugin {
  /** What this instance serves, once registered: undefined before `register`. */
  status(): HooksStatus | undefined;
  /**
   * This instance's prom-client registry (`hooks_*` metrics), for the host to serve: undefined before `register`,
   * when hooks are disabled, and when `options.metrics` replaced or turned off the default metrics.
   */
  metrics(): Registry | undefined;
  /**
   * Counts failed attempts at a credential of the host's own (`scope` names it, e.g. `metrics`) per client address,
   * with the hook token's store, window and limit (`hooks.authFailures`) and client address (`hooks.trustedProxies`),
   * apart from the hook token's own count. Undefined before `register` and when hooks are disabled.
   */
  authThrottle(scope: string): AuthThrottle | undefined;
  /**
   * Checks a new gateway config against this registered instance without changing anything: every problem
   * registration would list, and the transforms of its mappings loaded. `apply()` then makes it the config new
   * requests run on, at once; requests under way finish on the config they started with, and the store, the journal
   * and the metrics carry on. Fields the instance was built on (its path, store, journal, dedupe and transform pool
   * settings, `hooks.enabled`) keep their running values: `restartNeeded` names those that changed.
   */
  prepareReload(config: unknown): Promise<HooksReload>;
  /**
   * What the inspector page shows: the newest requests, one request's detail, a dry run and a replay, redacted.
   * Undefined before `register` and when hooks are disabled. Serve it with `createInspectorHandler`.
   */
  inspector(): InspectorSource | undefined;
}

export function createHooksPlugin(options: HooksPluginOptions = {}): HooksPlugin {
  const instance: HooksInstance = { status: undefined, active: undefined };
  return {
    id: "hooks",
    name: "Webhook intake",
    configSchema: manifest.configSchema,
    status: () => instance.status,
    metrics: () => instance.active?.serving?.ports.metrics.registry,
    // Through the composition: each call counts with the config in force then (a reload's limit and proxies too).
    authThrottle: (scope) => instance.active?.serving?.hooks.authThrottle(scope),
    inspector: () => instance.active?.inspector?.source(),
    register: (host: PluginHost) => registerHooks(instance, host, options),
    prepareReload: (config: unknown) => reloadHooks(instance, config, options),
  };
}

const plugin: HooksPlugin = createHooksPlugin();
export default plugin;

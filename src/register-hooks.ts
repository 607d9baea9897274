/** @module What registering the plugin on a host does: the config checked, the ports resolved, the request path composed, its route and service registered; and a reload checked against the running instance. */
import { type CompositionContext, composeHooks } from "./compose.js";
import { ConfigError } from "./config/issues.js";
import type { ResolveContext } from "./config/resolve.js";
import { resolvePorts } from "./container.js";
import type { PluginHost } from "./host/contract.js";
import { type InspectorOnDemand, inspectorOnDemand } from "./inspector/inspector-feed.js";
import type { HooksPluginOptions } from "./options.js";
import {
  type PreparedHooks,
  prepareHooks,
  type TransformLoadReport,
  transformsBesideSecrets,
} from "./prepare-hooks.js";
import { checkReload, type HooksReload, type RunningHooks } from "./prepare-reload.js";
import { describeStatus, type HooksStatus } from "./status.js";

/** What a registered instance runs on, with the host it registered on. */
export interface Active extends RunningHooks {
  host: PluginHost;
  /** What the inspector reads, made when first asked for; absent when hooks are disabled. */
  inspector?: InspectorOnDemand;
}

/** One plugin instance's state: what it serves, once registered. */
export interface HooksInstance {
  status: HooksStatus | undefined;
  active: Active | undefined;
}

export function registerHooks(instance: HooksInstance, host: PluginHost, options: HooksPluginOptions): void {
  instance.active = undefined;
  const context: ResolveContext = {
    configDir: host.configDir ?? process.cwd(),
    env: host.env,
    stateDir: host.stateDir,
    mainSessionKey: host.mainSessionKey,
    channels: host.channels,
    agents: host.agents,
  };
  const result = prepareHooks(host.config, context);
  if (!result.prepared) throw new ConfigError(result.issues);
  for (const warning of result.warnings) host.logger.warn(warning);
  const prepared = result.prepared;
  const exposed = transformsBesideSecrets(prepared, host.secrets ?? [], host.env ?? process.env);
  if (exposed !== undefined) host.logger.warn(exposed);
  const { config, mappings, signedPaths } = prepared;
  instance.status = describeStatus(config, mappings, [], signedPaths);
  const registered = { host, context, prepared, raw: result.read };
  if (!config.enabled) {
    instance.active = { ...registered, serving: undefined };
    host.logger.info("hooks are disabled (set hooks.enabled to true to expose the intake)");
    return;
  }
  instance.active = { ...registered, ...serveHooks(instance, host, prepared, options) };
}

/** The enabled intake: its ports, the inspector (made when asked for), the route and the service on the host. */
function serveHooks(
  instance: HooksInstance,
  host: PluginHost,
  prepared: PreparedHooks,
  options: HooksPluginOptions,
): Pick<Active, "serving" | "inspector"> {
  const { config, mappings, signedPaths } = prepared;
  // The host is read when the journal writes: it may install its barrier after registration (the reference gateway
  // opens its database then).
  const ports = resolvePorts({ prepared, logger: host.logger, options, host });
  const inspector = inspectorOnDemand({
    bus: host.bus,
    clock: ports.clock,
    journal: ports.journal,
    // A journal the host swapped in keeps its records where only it knows.
    journalDir: options.journal === undefined ? config.journal.dir : undefined,
    logger: host.logger,
    hostSecrets: host.secrets ?? [],
    live: () => {
      const active = instance.active;
      return active?.serving
        ? { prepared: active.prepared, pipeline: active.serving.hooks.pipeline }
        : undefined;
    },
  });
  const hooks = composeHooks(
    prepared,
    ports,
    compositionContext(host, options, (reports) => {
      instance.status = describeStatus(config, mappings, reports, signedPaths);
    }),
  );
  host.registerHttpRoute({ path: config.path, match: "prefix", auth: "plugin", handler: hooks.handler });
  host.registerService({
    id: "hooks",
    async start() {
      await hooks.service.start();
      await inspector.start();
    },
    drain: () => hooks.service.drain?.(),
    async stop() {
      await inspector.stop();
      await hooks.service.stop();
    },
  });
  return { serving: { hooks, ports }, inspector };
}

/** Checks a new config against the running instance; `apply()` makes it the one new requests run on. */
export async function reloadHooks(
  instance: HooksInstance,
  config: unknown,
  options: HooksPluginOptions,
): Promise<HooksReload> {
  const running = instance.active;
  if (running === undefined) throw new Error("prepareReload called before register");
  const { accepted, ...checked } = await checkReload(running, instance.status, config, options);
  return {
    ...checked,
    apply() {
      if (accepted === undefined) throw new Error("a config with problems cannot be applied");
      if (instance.active !== running) throw new Error("the config changed since this reload was checked");
      accepted.swap();
      instance.active = { ...running, prepared: accepted.next, raw: accepted.raw };
      instance.status = checked.status;
      for (const warning of accepted.warnings) running.host.logger.warn(warning);
    },
  };
}

/** How the plugin composes on a host: its bus and logger, its turn admission, and what it is told of transforms. */
function compositionContext(
  host: PluginHost,
  options: HooksPluginOptions,
  loaded: (reports: TransformLoadReport[]) => void,
): CompositionContext {
  return {
    logger: host.logger,
    bus: host.bus,
    capture: options.capture,
    runDeadlineGraceMs: options.runDeadlineGraceMs,
    admitAgentTurn: host.admitAgentTurn ? (turn) => host.admitAgentTurn!(turn) : undefined,
    turnAdmissionTimeoutMs: options.turnAdmissionTimeoutMs,
    // Read when called: a host may install it after registration.
    checkStored: (events) => host.checkStored?.(events),
    durableThrough: () => host.durableThrough?.(),
    stateName: () => host.stateName?.(),
    transformsLoaded: (reports) => {
      loaded(reports);
      for (const report of reports) {
        if (report.error === undefined) continue;
        host.logger.error(`transform of mapping "${report.mappingId}" failed to load: ${report.error}`, {
          mappingId: report.mappingId,
          module: report.module,
        });
      }
    },
  };
}

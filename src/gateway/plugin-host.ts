/** @module Registers the plugin on the reference gateway: the host it registers on, its config problems reported with the gateway's, and the metrics route beside its own. */
import {
  ConfigError,
  type ConfigIssue,
  configuredAgents,
  createHooksPlugin,
  type HookBus,
  type HookPlugin,
  type HostAgents,
  isConfigError,
  type MetricsRegistry,
  type PluginHost,
} from "../index.js";
import type { GatewaySections } from "./gateway-config.js";
import type { GatewayLogger } from "./logger.js";
import { createMetricsRoute, credentialThrottleOf, METRICS_PATH } from "./metrics-endpoint.js";
import type { PluginServices } from "./plugin-services.js";
import { createRequestCapture } from "./request-capture.js";
import type { Router } from "./router.js";

/** The host the gateway gives its plugin; its agents are always set. */
export type GatewayHost = PluginHost & { agents: HostAgents };

export interface PluginSetup {
  /** The gateway config, as the plugin reads its slice of it. */
  config: unknown;
  configDir: string;
  env: NodeJS.ProcessEnv;
  logger: GatewayLogger;
  bus: HookBus;
  sections: GatewaySections;
  stateDir: string;
  /** The key the inspector's page logs in with (configured, or made for this start). */
  inspectorKey: string;
  /** Where the plugin's route goes, and the metrics route after it. */
  router: Router;
  services: PluginServices;
  /** The problems of the gateway's sections, reported together with the plugin's. */
  issues: readonly ConfigIssue[];
  /** Default: a fresh `createHooksPlugin()` (with `--capture` wired in when `captureDir` is set). */
  plugin: HookPlugin | undefined;
  captureDir: string | undefined;
}

export interface RegisteredPlugin {
  plugin: HookPlugin;
  host: GatewayHost;
  /** `hooks.path` as the plugin uses it, or undefined when hooks are disabled. */
  pluginPath: string | undefined;
}

/**
 * Registers the plugin on a host of the gateway's, and the metrics route beside the plugin's route. Throws a
 * ConfigError listing every problem (gateway sections and plugin slice) before anything starts.
 */
export function registerPlugin(setup: PluginSetup): RegisteredPlugin {
  const { router, sections } = setup;
  const host = createPluginHost(setup);
  const plugin = setup.plugin ?? createDefaultPlugin(setup);
  const issues = [...setup.issues];
  // Registration validates the plugin's config: its problems and the gateway's are reported together.
  try {
    plugin.register(host);
  } catch (error) {
    if (!isConfigError(error)) throw error;
    throw new ConfigError([...issues, ...error.issues]);
  }
  // The plugin's one route, before the gateway adds its own.
  const pluginPath = router.routes[0]?.path;
  if (sections.server.metrics) addMetricsRoute(router, plugin, pluginPath, sections, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return { plugin, host, pluginPath };
}

function createPluginHost(setup: PluginSetup): GatewayHost {
  const { router, sections, services } = setup;
  return {
    config: setup.config,
    configDir: setup.configDir,
    env: setup.env,
    logger: setup.logger,
    bus: setup.bus,
    channels: sections.channels,
    // `agents.entries` of the file, read as OpenClaw reads its own; none declared: one agent, `main`.
    agents: configuredAgents(setup.config),
    mainSessionKey: sections.session.mainKey,
    stateDir: setup.stateDir,
    secrets: [
      setup.inspectorKey,
      ...(sections.server.metricsToken === undefined ? [] : [sections.server.metricsToken]),
    ],
    registerHttpRoute: (route) => router.add(route),
    registerService: (service) => services.register(service),
  };
}

function createDefaultPlugin(setup: PluginSetup): HookPlugin {
  return createHooksPlugin({
    ...(setup.captureDir ? { capture: createRequestCapture(setup.captureDir, setup.logger) } : {}),
    // Nothing serves them: nothing is counted either.
    ...(setup.sections.server.metrics ? {} : { metrics: false }),
  });
}

/** Serves the plugin's metrics at METRICS_PATH; a plugin route on that path is a problem added to `issues`. */
function addMetricsRoute(
  router: Router,
  plugin: HookPlugin,
  pluginPath: string | undefined,
  sections: GatewaySections,
  issues: ConfigIssue[],
): void {
  if (pluginPath === METRICS_PATH) {
    issues.push({
      path: "hooks.path",
      message: `${METRICS_PATH} is where the gateway serves its metrics: choose another path, or set server.metrics to false`,
    });
    return;
  }
  const throttle = credentialThrottleOf(plugin);
  router.add(
    createMetricsRoute({ hooks: registryOf(plugin), token: sections.server.metricsToken, throttle }),
  );
}

/** The plugin's metrics registry, when it is one that keeps one (a `createHooksPlugin` instance). */
function registryOf(plugin: HookPlugin): MetricsRegistry | undefined {
  return "metrics" in plugin && typeof plugin.metrics === "function"
    ? (plugin.metrics() as MetricsRegistry | undefined)
    : undefined;
}

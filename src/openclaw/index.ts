/** @module The OpenClaw native plugin: turns OpenClaw's plugin API into the host contract and runs the hooks plugin on it. */
import { createRequire } from "node:module";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import {
  CHANNEL_IDS,
  ConfigError,
  createHooksPlugin,
  type HookEvents,
  type HostService,
  type HttpRoute,
  isConfigError,
  type PluginHost,
} from "../index.js";
import { startOpenClawEffects } from "./effects.js";
import {
  CONFIG_KEY,
  inOpenClawTerms,
  overlapWithBuiltInHooks,
  PLUGIN_ID,
  pluginGatewayConfig,
} from "./gateway-config.js";
import { openClawLogger } from "./logger.js";
import { notServing } from "./not-serving.js";
import type { OpenClawPluginApi } from "./openclaw-api.js";

// OpenClaw reads the manifest before any code runs; the entry carries the same schema for loaders that ask it.
const manifest = createRequire(import.meta.url)("../../openclaw.plugin.json") as {
  name: string;
  description: string;
  configSchema: unknown;
};

/** OpenClaw's main session, as its system-event queue names it (`agent:main:main` once scoped to the main agent). */
const MAIN_SESSION_KEY = "main";

/** OpenClaw's state directory: `OPENCLAW_STATE_DIR`, else `~/.openclaw`, as its own runtime resolves it. */
function openclawStateDir(api: OpenClawPluginApi): string {
  return (
    api.runtime.state?.resolveStateDir?.() ??
    process.env.OPENCLAW_STATE_DIR ??
    path.join(process.env.HOME ?? ".", ".openclaw")
  );
}

/** Relative paths in the plugin's config (transformsDir) resolve against OpenClaw's config file, like OpenClaw's own. */
function openclawConfigDir(stateDir: string): string {
  const configPath = process.env.OPENCLAW_CONFIG_PATH;
  return configPath ? path.dirname(path.resolve(configPath)) : stateDir;
}

function register(api: OpenClawPluginApi): void {
  const full = api.registrationMode === undefined || api.registrationMode === "full";
  const logger = openClawLogger(api.logger);
  const bus = new EventEmitter<HookEvents>();
  const stateDir = openclawStateDir(api);
  const routes: HttpRoute[] = [];
  const services: HostService[] = [];
  const host: PluginHost = {
    config: pluginGatewayConfig(api.config, api.pluginConfig),
    configDir: openclawConfigDir(stateDir),
    logger,
    bus,
    // OpenClaw has all eight (mattermost as a plugin); one it has not configured is a logged delivery failure.
    channels: CHANNEL_IDS,
    mainSessionKey: MAIN_SESSION_KEY,
    stateDir: path.join(stateDir, PLUGIN_ID),
    registerHttpRoute: (route) => routes.push(route),
    registerService: (service) => services.push(service),
  };

  const plugin = createHooksPlugin();
  try {
    plugin.register(host);
  } catch (error) {
    throw isConfigError(error) ? inOpenClawTerms(error) : error;
  }
  const served = plugin.status();
  if (served?.enabled && routes.length > 0) {
    const overlap = overlapWithBuiltInHooks(api.config, served.path);
    if (overlap) throw new ConfigError([overlap]);
  }
  for (const route of routes) {
    api.registerHttpRoute({
      path: route.path,
      match: route.match,
      auth: route.auth,
      handler: full ? route.handler : notServing,
    });
  }
  // Discovery, inspection and setup loads describe the plugin; only the gateway's own load serves and runs.
  if (!full || routes.length === 0) return;
  let effects: ReturnType<typeof startOpenClawEffects> | undefined;
  api.registerService({
    id: PLUGIN_ID,
    async start() {
      effects = startOpenClawEffects({ runtime: api.runtime, bus, logger, openclawConfig: () => api.config });
      for (const service of services) await service.start();
      logger.info(`webhook intake serving ${served?.path} (config: ${CONFIG_KEY})`);
    },
    async stop() {
      for (const service of services) await service.stop();
      effects?.stop();
      effects = undefined;
    },
  });
}

const openclawPlugin = {
  id: PLUGIN_ID,
  name: manifest.name,
  description: manifest.description,
  configSchema: manifest.configSchema,
  register,
};

export default openclawPlugin;

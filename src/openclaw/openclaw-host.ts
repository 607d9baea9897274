/** @module OpenClaw's plugin API as the host contract: config, directories, logger, bus, and the registrations kept to forward. */
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import {
  type AgentTurn,
  CHANNEL_IDS,
  configuredAgents,
  type HookBus,
  type HookEvents,
  type HostService,
  type HttpRoute,
  type PluginHost,
} from "../index.js";
import { PLUGIN_ID, pluginGatewayConfig } from "./gateway-config.js";
import { openClawLogger } from "./logger.js";
import type { OpenClawPluginApi } from "./openclaw-api.js";
import { notAdmitted } from "./turn-refusal.js";

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

export interface OpenClawHost {
  host: PluginHost;
  bus: HookBus;
  /** What the plugin registered; forwarded to OpenClaw once the registration is known to be acceptable. */
  routes: HttpRoute[];
  services: HostService[];
  /** Who admits agent turns while the service runs (the effects); undefined: none is admitted. */
  setAdmission(admit: ((turn: AgentTurn) => Promise<void>) | undefined): void;
}

export function createOpenClawHost(api: OpenClawPluginApi, options: { serving: boolean }): OpenClawHost {
  const bus = new EventEmitter<HookEvents>();
  const stateDir = openclawStateDir(api);
  const routes: HttpRoute[] = [];
  const services: HostService[] = [];
  let admission: ((turn: AgentTurn) => Promise<void>) | undefined;
  const host: PluginHost = {
    config: pluginGatewayConfig(api.config, api.pluginConfig),
    configDir: openclawConfigDir(stateDir),
    logger: openClawLogger(api.logger, options),
    bus,
    // OpenClaw has all eight (mattermost as a plugin); one it has not configured is a logged delivery failure.
    channels: CHANNEL_IDS,
    // OpenClaw's own agents (`agents.entries`) and its owner of unscoped work as the default.
    agents: configuredAgents(api.config),
    mainSessionKey: MAIN_SESSION_KEY,
    stateDir: path.join(stateDir, PLUGIN_ID),
    registerHttpRoute: (route) => routes.push(route),
    registerService: (service) => services.push(service),
    admitAgentTurn: (turn) =>
      admission?.(turn) ??
      Promise.reject(notAdmitted("unavailable", "the plugin's service is not running in OpenClaw")),
  };
  return {
    host,
    bus,
    routes,
    services,
    setAdmission: (admit) => {
      admission = admit;
    },
  };
}

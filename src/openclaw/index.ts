/** @module The OpenClaw native plugin: runs the hooks plugin on OpenClaw's API, serving and with effects only in a full load. */
import { createRequire } from "node:module";
import {
  ConfigError,
  createHooksPlugin,
  createInspectorHandler,
  isConfigError,
  MAIN_AGENT_ID,
} from "../index.js";
import { overlapWithBuiltInHooks } from "./built-in-hooks.js";
import { startOpenClawEffects } from "./effects.js";
import { CONFIG_KEY, inOpenClawTerms, PLUGIN_ID } from "./gateway-config.js";
import { registerInspector } from "./inspector-registration.js";
import { INSPECTOR_PATH, overlapWithOwnPages } from "./inspector-tab.js";
import { createMetricsHandler, METRICS_PATH } from "./metrics-route.js";
import { notServing } from "./not-serving.js";
import type { OpenClawPluginApi } from "./openclaw-api.js";
import { createOpenClawHost } from "./openclaw-host.js";
import { ServingGate } from "./serving-gate.js";

// OpenClaw reads the manifest before any code runs; the entry carries the same schema for loaders that ask it.
const manifest = createRequire(import.meta.url)("../../openclaw.plugin.json") as {
  name: string;
  description: string;
  configSchema: unknown;
};

function register(api: OpenClawPluginApi): void {
  // Discovery, inspection and setup loads describe the plugin; only the gateway's own load serves and runs.
  const full = api.registrationMode === undefined || api.registrationMode === "full";
  const { host, bus, routes, services, setAdmission } = createOpenClawHost(api, { serving: full });
  const plugin = createHooksPlugin();
  try {
    plugin.register(host);
  } catch (error) {
    throw isConfigError(error) ? inOpenClawTerms(error) : error;
  }
  const served = plugin.status();
  if (!served?.enabled || routes.length === 0) return;
  const overlap = overlapWithBuiltInHooks(api.config, served.path) ?? overlapWithOwnPages(served.path);
  if (overlap) throw new ConfigError([overlap]);

  const gate = new ServingGate();
  for (const { path, match, auth, handler } of routes) {
    api.registerHttpRoute({ path, match, auth, handler: full ? gate.guard(handler) : notServing });
  }
  // The Control UI tab frames the route in a sandbox: an opaque origin whose script's calls carry no credential
  // and whose POSTs OpenClaw refuses. So the pages are plain HTML, navigations only; the API stays for the bearer.
  const inspector = createInspectorHandler({
    auth: { kind: "host" },
    basePath: INSPECTOR_PATH,
    source: () => plugin.inspector(),
    framing: "same-origin",
    page: "server-rendered",
  });
  registerInspector(api, {
    handler: full ? gate.guard(inspector) : notServing,
    reader: () => plugin.inspector(),
    full,
    logger: host.logger,
  });
  // Listed in every load like the inspector; OpenClaw checks its gateway auth before the handler runs.
  api.registerHttpRoute({
    path: METRICS_PATH,
    match: "exact",
    auth: "gateway",
    handler: full ? createMetricsHandler(() => plugin.metrics()) : notServing,
  });
  if (!full) return;
  let effects: ReturnType<typeof startOpenClawEffects> | undefined;
  api.registerService({
    id: PLUGIN_ID,
    async start() {
      effects?.stop();
      effects = startOpenClawEffects({
        runtime: api.runtime,
        bus,
        logger: host.logger,
        openclawConfig: api.config,
        stateDir: host.stateDir,
        defaultAgentId: host.agents?.defaultId ?? MAIN_AGENT_ID,
      });
      setAdmission(effects.admitAgentTurn);
      for (const service of services) await service.start();
      gate.open();
      host.logger.info(`webhook intake serving ${served.path} (config: ${CONFIG_KEY})`);
    },
    async stop() {
      // Before the wait for requests in flight: a turn ending meanwhile must not start a waiting one, which OpenClaw,
      // stopping or reloading, would refuse. The waiting turns stay in the journal for the next start.
      for (const service of services) service.drain?.();
      await gate.close();
      try {
        for (const service of services) await service.stop();
      } finally {
        setAdmission(undefined);
        effects?.stop();
        effects = undefined;
      }
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

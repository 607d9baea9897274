/** @module OpenClaw's config seen as the gateway config the plugin reads, and the check that keeps it off OpenClaw's own hooks. */
import { ConfigError, type ConfigIssue } from "../index.js";

export const PLUGIN_ID = "hooks-intake";
/** Where the plugin's `hooks` fields live in OpenClaw's config. */
export const CONFIG_KEY = `plugins.entries.${PLUGIN_ID}.config`;

function field(object: unknown, key: string): unknown {
  return object !== null && typeof object === "object" ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * The plugin reads a gateway config shaped `{ hooks, gateway.auth.token, agents.defaults.models }`. Inside OpenClaw
 * its `hooks` block is the plugin's own entry (OpenClaw's top-level `hooks` belongs to its built-in webhooks),
 * and the other two are OpenClaw's: the hook token must differ from OpenClaw's gateway token, and model overrides
 * obey OpenClaw's model allow-list.
 */
export function pluginGatewayConfig(openclawConfig: unknown, pluginConfig: unknown): unknown {
  const models = field(field(field(openclawConfig, "agents"), "defaults"), "models");
  const gatewayToken = field(field(field(openclawConfig, "gateway"), "auth"), "token");
  return {
    hooks: pluginConfig ?? {},
    ...(typeof gatewayToken === "string" ? { gateway: { auth: { token: gatewayToken } } } : {}),
    ...(models === undefined ? {} : { agents: { defaults: { models } } }),
  };
}

/** Config problems name the keys the user wrote in OpenClaw's config, not the plugin's own `hooks.…`. */
export function inOpenClawTerms(error: ConfigError): ConfigError {
  const rename = (path: string) =>
    path === "hooks"
      ? CONFIG_KEY
      : path.startsWith("hooks.")
        ? `${CONFIG_KEY}${path.slice("hooks".length)}`
        : path;
  return new ConfigError(
    error.issues.map((issue) => ({
      ...issue,
      path: rename(issue.path),
      message: issue.message.replaceAll(/\bhooks\.(?=[a-zA-Z])/g, `${CONFIG_KEY}.`),
    })),
  );
}

/** OpenClaw's built-in hooks path as OpenClaw serves it: leading slash, no trailing one, `/hooks` by default. */
function builtInHooksPath(openclawConfig: unknown): string | undefined {
  const hooks = field(openclawConfig, "hooks");
  if (field(hooks, "enabled") !== true) return undefined;
  const raw = field(hooks, "path");
  const path = typeof raw === "string" && raw.trim() !== "" ? raw.trim() : "/hooks";
  return `/${path.replace(/^\/+|\/+$/g, "")}`;
}

const covers = (outer: string, inner: string) => inner === outer || inner.startsWith(`${outer}/`);

/**
 * With both enabled on overlapping paths OpenClaw's own handler answers first and the plugin never sees a request
 * (senders get OpenClaw's plain-text 401 for our token), so the plugin refuses to register instead.
 */
export function overlapWithBuiltInHooks(
  openclawConfig: unknown,
  pluginPath: string,
): ConfigIssue | undefined {
  const builtIn = builtInHooksPath(openclawConfig);
  if (builtIn === undefined || !(covers(builtIn, pluginPath) || covers(pluginPath, builtIn)))
    return undefined;
  return {
    path: `${CONFIG_KEY}.path`,
    message:
      `"${pluginPath}" overlaps OpenClaw's built-in hooks at hooks.path "${builtIn}" (hooks.enabled is true), ` +
      `which would answer these requests first: set ${CONFIG_KEY}.path to a path of its own (for example "/intake") ` +
      "or set hooks.enabled to false",
  };
}

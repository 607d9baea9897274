/** @module OpenClaw's config seen as the gateway config the plugin reads, and the plugin's keys named as OpenClaw's config has them. */
import { ConfigError } from "../index.js";

export const PLUGIN_ID = "hooks-intake";
/** Where the plugin's `hooks` fields live in OpenClaw's config. */
export const CONFIG_KEY = `plugins.entries.${PLUGIN_ID}.config`;

export function field(object: unknown, key: string): unknown {
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
  // OpenClaw also takes its token from the environment when its config names none.
  const gatewayToken =
    field(field(field(openclawConfig, "gateway"), "auth"), "token") ?? process.env.OPENCLAW_GATEWAY_TOKEN;
  return {
    hooks: pluginConfig ?? {},
    ...(typeof gatewayToken === "string" ? { gateway: { auth: { token: gatewayToken } } } : {}),
    ...(models === undefined ? {} : { agents: { defaults: { models } } }),
  };
}

/**
 * The plugin's messages name its keys `hooks.…` (`hooks.token is shorter…`, `set hooks.enabled to true`); inside
 * OpenClaw those keys are OpenClaw's own built-in hooks, so config errors and log lines name the key the user wrote.
 * A file's name is left alone: a secret's `/etc/openclaw/hooks.token` is a path, not a key.
 */
export function inOpenClawKeys(text: string): string {
  return text.replaceAll(/(?<![\w.\-/\\~])hooks(?=\.[a-zA-Z])/g, CONFIG_KEY).replace(/^hooks$/, CONFIG_KEY);
}

export function inOpenClawTerms(error: ConfigError): ConfigError {
  return new ConfigError(
    error.issues.map((issue) => ({
      ...issue,
      path: inOpenClawKeys(issue.path),
      message: inOpenClawKeys(issue.message),
    })),
  );
}

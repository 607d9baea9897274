/** @module The plugin keeps off OpenClaw's own built-in hooks: a path overlapping theirs is a config error naming both keys. */
import type { ConfigIssue } from "../index.js";
import { CONFIG_KEY, field } from "./gateway-config.js";

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

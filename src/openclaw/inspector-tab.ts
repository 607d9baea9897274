/** @module Where the inspector lives inside OpenClaw: its route under OpenClaw's gateway auth, and the Control UI tab that frames it. */
import type { ConfigIssue } from "../index.js";
import { CONFIG_KEY, PLUGIN_ID } from "./gateway-config.js";
import { METRICS_PATH } from "./metrics-route.js";
import type { OpenClawControlUiDescriptor } from "./openclaw-api.js";

/**
 * The page and its JSON API, under the plugin's own prefix (as OpenClaw suggests, `/plugins/<id>/…`), so it never
 * overlaps the intake's path, whose routes OpenClaw does not authenticate.
 */
export const INSPECTOR_PATH = `/plugins/${PLUGIN_ID}/inspector`;

const covers = (outer: string, inner: string) => inner === outer || inner.startsWith(`${outer}/`);

const overlaps = (a: string, b: string) => covers(a, b) || covers(b, a);

/**
 * OpenClaw refuses routes that overlap with different auth, and the intake's take none of OpenClaw's: an intake
 * path over or under the inspector's or the metrics' is a config error naming the key, not OpenClaw's failure to
 * load the plugin.
 */
export function overlapWithOwnPages(pluginPath: string): ConfigIssue | undefined {
  const [what, at] = overlaps(pluginPath, INSPECTOR_PATH)
    ? ["the inspector's page", INSPECTOR_PATH]
    : overlaps(pluginPath, METRICS_PATH)
      ? ["the metrics route", METRICS_PATH]
      : [];
  if (at === undefined) return undefined;
  return {
    path: `${CONFIG_KEY}.path`,
    message: `"${pluginPath}" overlaps ${what} at "${at}": give the intake a path of its own (for example "/intake")`,
  };
}

/**
 * A sidebar tab that renders the page in `<iframe sandbox="allow-scripts">`. OpenClaw lets the frame in with a
 * short-lived cookie it mints for this plugin's gateway-auth route, sent with navigations and subresource loads,
 * GET and HEAD only: the route serves script-free pages there (list, detail, dry run, fixture, comparison), and a
 * replay needs the gateway token or the CLI.
 */
export function inspectorTab(): OpenClawControlUiDescriptor {
  return {
    id: "inspector",
    surface: "tab",
    label: "Webhooks",
    description: "Every webhook request the intake received, what it matched and what became of it.",
    icon: "scrollText",
    group: "control",
    path: INSPECTOR_PATH,
    requiredScopes: ["operator.read"],
  };
}

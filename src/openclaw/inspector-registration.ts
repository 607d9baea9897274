/** @module Announces the inspector to OpenClaw: its page on a gateway-auth route, a Control UI tab, and the assistant's read-only tools. */
import type { HostLogger, RouteHandler } from "../index.js";
import { INSPECTOR_PATH, inspectorTab } from "./inspector-tab.js";
import { createInspectorTools, type InspectorReader } from "./inspector-tools.js";
import type { OpenClawPluginApi } from "./openclaw-api.js";

export interface InspectorRegistration {
  /** The page and its API, answering under INSPECTOR_PATH; OpenClaw has authenticated the caller. */
  handler: RouteHandler;
  /** What the tools read, asked at each call. */
  reader: () => InspectorReader | undefined;
  /** Only the gateway's own load gives the assistant tools; the others describe the plugin. */
  full: boolean;
  logger: HostLogger;
}

/**
 * The route is registered like the intake's, in every load, so `plugins inspect` lists it; OpenClaw checks its
 * gateway auth (bearer token, or the Control UI's frame cookie) before the handler runs. A Control UI tab or a tool
 * this OpenClaw cannot take is left out with a debug line: the page still answers at its path.
 */
export function registerInspector(api: OpenClawPluginApi, options: InspectorRegistration): void {
  const { handler, reader, full, logger } = options;
  api.registerHttpRoute({ path: INSPECTOR_PATH, match: "prefix", auth: "gateway", handler });

  const controls = api.session?.controls;
  if (controls?.registerControlUiDescriptor) controls.registerControlUiDescriptor(inspectorTab());
  else logger.debug(`this OpenClaw has no plugin tabs: the inspector is at ${INSPECTOR_PATH} without one`);

  if (!full) return;
  if (!api.registerTool) {
    logger.debug("this OpenClaw takes no plugin tools: the assistant gets no inspector tools");
    return;
  }
  for (const tool of createInspectorTools(reader)) api.registerTool(tool);
}

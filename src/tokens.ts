/** @module Injection tokens: one symbol per service the plugin's container provides. */
import type { InjectionToken } from "tsyringe";
import type { RequestDispatcher } from "./actions/dispatch-request.js";
import type { RunCompletionTracker } from "./actions/run-completion.js";
import type { ActionPolicy } from "./actions/validate-action.js";
import type { ResolvedHooksConfig } from "./config/resolve.js";
import type { HookBus } from "./events.js";
import type { CapturedRequest, HostLogger, RouteHandler } from "./host/contract.js";
import type { CompiledMapping } from "./mapping/compile-mappings.js";
import type { DefaultMappingEngine } from "./mapping/mapping-engine.js";
import type { TransformLoader } from "./mapping/transform-loader.js";

export interface RuntimeOptions {
  /** Extra wait past an agent run's timeoutSeconds before the plugin publishes a timeout summary. */
  runDeadlineGraceMs: number;
  /** Limit for one transform call. */
  transformTimeoutMs: number;
  /** How often a loaded transform's file is checked for changes (0: on every request). */
  transformReloadCheckMs: number;
}

export const TOKENS = {
  config: Symbol("hooks.config") as InjectionToken<ResolvedHooksConfig>,
  options: Symbol("hooks.options") as InjectionToken<RuntimeOptions>,
  logger: Symbol("hooks.logger") as InjectionToken<HostLogger>,
  bus: Symbol("hooks.bus") as InjectionToken<HookBus>,
  mappings: Symbol("hooks.mappings") as InjectionToken<readonly CompiledMapping[]>,
  actionPolicy: Symbol("hooks.actionPolicy") as InjectionToken<ActionPolicy>,
  transformLoader: Symbol("hooks.transformLoader") as InjectionToken<TransformLoader>,
  mappingEngine: Symbol("hooks.mappingEngine") as InjectionToken<DefaultMappingEngine>,
  dispatcher: Symbol("hooks.dispatcher") as InjectionToken<RequestDispatcher>,
  tracker: Symbol("hooks.tracker") as InjectionToken<RunCompletionTracker>,
  handler: Symbol("hooks.handler") as InjectionToken<RouteHandler>,
  /** Held in an object: tsyringe treats `useValue: undefined` as no provider at all. */
  capture: Symbol("hooks.capture") as InjectionToken<{
    hook: ((request: CapturedRequest) => void) | undefined;
  }>,
} as const;

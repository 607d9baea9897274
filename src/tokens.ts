/** @module Injection tokens: one per port a deployment may swap, plus the few values and singletons the entry wires. */
import type { InjectionToken } from "tsyringe";
import type { RunCompletionTracker } from "./actions/run-completion.js";
import type { Clock } from "./clock.js";
import type { ResolvedHooksConfig } from "./config/resolve.js";
import type { HookBus } from "./events.js";
import type { HostLogger, RouteHandler } from "./host/contract.js";
import type { Ids } from "./ids.js";
import type { Journal } from "./journal/journal.js";
import type { CompiledMapping } from "./mapping/compile-mappings.js";
import type { TransformRunner } from "./mapping/transform-runner.js";
import type { HookMetrics } from "./metrics/metrics.js";
import type { DuplicateDeps } from "./pipeline/duplicates.js";
import type { Pipeline } from "./pipeline/run-pipeline.js";
import type { Store } from "./store/store.js";
import type { Verifiers } from "./verify/verifier.js";

export const PORTS = {
  store: Symbol("hooks.port.store") as InjectionToken<Store>,
  journal: Symbol("hooks.port.journal") as InjectionToken<Journal>,
  clock: Symbol("hooks.port.clock") as InjectionToken<Clock>,
  ids: Symbol("hooks.port.ids") as InjectionToken<Ids>,
  transformRunner: Symbol("hooks.port.transformRunner") as InjectionToken<TransformRunner>,
  verifiers: Symbol("hooks.port.verifiers") as InjectionToken<Verifiers>,
} as const;

export const TOKENS = {
  config: Symbol("hooks.config") as InjectionToken<ResolvedHooksConfig>,
  mappings: Symbol("hooks.mappings") as InjectionToken<readonly CompiledMapping[]>,
  logger: Symbol("hooks.logger") as InjectionToken<HostLogger>,
  bus: Symbol("hooks.bus") as InjectionToken<HookBus>,
  tracker: Symbol("hooks.tracker") as InjectionToken<RunCompletionTracker>,
  duplicates: Symbol("hooks.duplicates") as InjectionToken<DuplicateDeps>,
  metrics: Symbol("hooks.metrics") as InjectionToken<HookMetrics>,
  pipeline: Symbol("hooks.pipeline") as InjectionToken<Pipeline>,
  handler: Symbol("hooks.handler") as InjectionToken<RouteHandler>,
} as const;

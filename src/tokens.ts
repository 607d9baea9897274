/** @module Injection tokens, one per port a deployment may swap: nothing else lives in the container. */
import type { InjectionToken } from "tsyringe";
import type { Clock, Ids } from "./clock.js";
import type { Journal } from "./journal/journal.js";
import type { TransformRunner } from "./mapping/transform-runner.js";
import type { HookMetrics } from "./metrics/metrics.js";
import type { Store } from "./store/store.js";
import type { Verifiers } from "./verify/verifier.js";

export const PORTS = {
  store: Symbol("hooks.port.store") as InjectionToken<Store>,
  journal: Symbol("hooks.port.journal") as InjectionToken<Journal>,
  clock: Symbol("hooks.port.clock") as InjectionToken<Clock>,
  ids: Symbol("hooks.port.ids") as InjectionToken<Ids>,
  transformRunner: Symbol("hooks.port.transformRunner") as InjectionToken<TransformRunner>,
  verifiers: Symbol("hooks.port.verifiers") as InjectionToken<Verifiers>,
  metrics: Symbol("hooks.port.metrics") as InjectionToken<HookMetrics>,
} as const;

/** The ports of one plugin instance, resolved once: what each of PORTS' tokens stands for. */
export type Ports = {
  [Name in keyof typeof PORTS]: (typeof PORTS)[Name] extends InjectionToken<infer Port> ? Port : never;
};

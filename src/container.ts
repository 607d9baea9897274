/** @module The ports of one plugin instance in a tsyringe child container: one the host registered by token, one given in the options, or a plain default. */
import "reflect-metadata";
import { type InjectionToken, instanceCachingFactory, container as rootContainer } from "tsyringe";
import { randomIds, systemClock } from "./clock.js";
import type { HostLogger } from "./host/contract.js";
import type { DurabilityBarrier } from "./journal/done-lines.js";
import { FileJournal } from "./journal/file-journal.js";
import { createNullJournal } from "./journal/null-journal.js";
import { createTransformRunner } from "./mapping/create-transform-runner.js";
import { DEFAULT_RELOAD_CHECK_MS } from "./mapping/transform-loader.js";
import { TRANSFORM_TIMEOUT_MS } from "./mapping/transform-runner.js";
import type { MetricLabels } from "./metrics/metrics.js";
import { NO_METRICS } from "./metrics/metrics.js";
import { PromMetrics } from "./metrics/prom-metrics.js";
import type { HooksPluginOptions } from "./options.js";
import type { PreparedHooks } from "./prepare-hooks.js";
import { MemoryStore } from "./store/memory.js";
import { RedisStore } from "./store/redis.js";
import { PORTS, type Ports } from "./tokens.js";
import { createVerifiers } from "./verify/signature-verifier.js";
import type { Verifiers } from "./verify/verifier.js";

export interface PortInputs {
  prepared: PreparedHooks;
  logger: HostLogger;
  /** Ports and settings the host swaps in. */
  options: HooksPluginOptions;
  /** The host, whose durability barrier (`persisted()`) the journal waits for when it has one. */
  host?: DurabilityBarrier | undefined;
}

/** The default of each port, made only when neither the options nor the host's container hold one. */
type Defaults = { [Name in keyof Ports]: (resolved: PortOf) => Ports[Name] };
type PortOf = <Name extends keyof Ports>(name: Name) => Ports[Name];

/**
 * The ports of one instance, resolved once: a port the host registered by token (in `options.container`) wins, then
 * one given in the options, else the default. A child container per instance: two instances share nothing.
 */
export function resolvePorts(inputs: PortInputs): Ports {
  const c = (inputs.options.container ?? rootContainer).createChildContainer();
  const port: PortOf = (name) => c.resolve(PORTS[name] as InjectionToken<Ports[typeof name]>);
  const defaults = defaultPorts(inputs);
  for (const name of Object.keys(PORTS) as Array<keyof Ports>) {
    const token = PORTS[name] as InjectionToken<unknown>;
    if (c.isRegistered(token, true)) continue;
    const make = defaults[name] as (resolved: PortOf) => unknown;
    c.register(PORTS[name] as InjectionToken<unknown>, {
      useFactory: instanceCachingFactory(() => make(port)),
    });
  }
  return {
    clock: port("clock"),
    ids: port("ids"),
    metrics: port("metrics"),
    journal: port("journal"),
    store: port("store"),
    verifiers: port("verifiers"),
    transformRunner: port("transformRunner"),
  };
}

/** Plain defaults for every port, or the one the options give; `port` resolves the others a default needs. */
function defaultPorts({ prepared, logger, options, host }: PortInputs): Defaults {
  const { config } = prepared;
  return {
    clock: () => options.clock ?? systemClock,
    ids: () => options.ids ?? randomIds,
    metrics: () =>
      options.metrics === false ? NO_METRICS : (options.metrics ?? new PromMetrics(metricLabelsOf(prepared))),
    journal: (port) => {
      if (options.journal) return options.journal;
      // No journal when there is nowhere to keep one (a host without a state directory) or the config turns it off.
      if (config.journal.dir === undefined) return createNullJournal();
      return new FileJournal({
        dir: config.journal.dir,
        fsync: config.journal.fsync,
        retainHours: config.journal.retainHours,
        refusedPerMinute: config.journal.refusedPerMinute,
        refusedTotalPerMinute: config.journal.refusedTotalPerMinute,
        refusedBytesPerMinute: config.journal.refusedBytesPerMinute,
        deliveryWindowMs: config.dedupe.windowSeconds * 1000,
        maxDeliveries: config.dedupe.maxEntries,
        clock: port("clock"),
        logger,
        host,
        metrics: port("metrics"),
      });
    },
    store: (port) => {
      if (options.store) return options.store;
      if (config.store.kind === "redis") {
        return new RedisStore({
          ...config.store,
          logger,
          clock: port("clock"),
          maxDeliveries: config.dedupe.maxEntries,
        });
      }
      return new MemoryStore(port("clock"), { maxDeliveries: config.dedupe.maxEntries });
    },
    verifiers: () => createVerifiersFor(prepared, options),
    transformRunner: (port) =>
      (options.transformRunner ?? createTransformRunner)({
        transformsDir: config.transformsDir,
        timeoutMs: options.transformTimeoutMs ?? TRANSFORM_TIMEOUT_MS,
        reloadCheckMs: options.transformReloadCheckMs ?? DEFAULT_RELOAD_CHECK_MS,
        maxMemoryMb: config.transforms.maxMemoryMb,
        maxWorkers: config.transforms.maxWorkers,
        env: config.transforms.env,
        metrics: port("metrics"),
        logger,
      }),
  };
}

/** Label values come from the config only: a sender's path or payload never makes a new series. */
export function metricLabelsOf({ mappings }: PreparedHooks): MetricLabels {
  return {
    hookPaths: mappings.flatMap((mapping) => (mapping.matchPath === undefined ? [] : [mapping.matchPath])),
    mappingIds: mappings.map((mapping) => mapping.id),
  };
}

/** The verifiers of a config's token and signed paths, made as the host asked (`options.verifiers`) or by default. */
export function createVerifiersFor(
  { config, signedPaths }: PreparedHooks,
  options: HooksPluginOptions,
): Verifiers {
  return (options.verifiers ?? createVerifiers)({ token: config.token, signedPaths });
}

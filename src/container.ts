/** @module The ports of one plugin instance in a tsyringe child container: each a swapped-in value or a default made by a factory. */
import "reflect-metadata";
import { instanceCachingFactory, container as rootContainer } from "tsyringe";
import { systemClock } from "./clock.js";
import type { HostLogger } from "./host/contract.js";
import { randomIds } from "./ids.js";
import { FileJournal } from "./journal/file-journal.js";
import { NULL_JOURNAL } from "./journal/null-journal.js";
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
  /** The host's durability barrier, when it has one. */
  persisted?: (() => Promise<void>) | undefined;
}

/** Registers every port by token (a value the host gave, else a factory of the default) and resolves them once. */
export function resolvePorts({ prepared, logger, options, persisted }: PortInputs): Ports {
  const { config } = prepared;
  const c = rootContainer.createChildContainer();
  const single = <T>(make: () => T) => ({ useFactory: instanceCachingFactory(make) });
  c.register(PORTS.clock, { useValue: options.clock ?? systemClock });
  c.register(PORTS.ids, { useValue: options.ids ?? randomIds });
  c.register(
    PORTS.metrics,
    single(() => {
      if (options.metrics === false) return NO_METRICS;
      if (options.metrics) return options.metrics;
      return new PromMetrics(metricLabelsOf(prepared));
    }),
  );
  c.register(
    PORTS.journal,
    single(() => {
      if (options.journal) return options.journal;
      // No journal when there is nowhere to keep one (a host without a state directory) or the config turns it off.
      if (config.journal.dir === undefined) return NULL_JOURNAL;
      return new FileJournal({
        dir: config.journal.dir,
        fsync: config.journal.fsync,
        retainHours: config.journal.retainHours,
        refusedPerMinute: config.journal.refusedPerMinute,
        refusedTotalPerMinute: config.journal.refusedTotalPerMinute,
        refusedBytesPerMinute: config.journal.refusedBytesPerMinute,
        deliveryWindowMs: config.dedupe.windowSeconds * 1000,
        maxDeliveries: config.dedupe.maxEntries,
        clock: c.resolve(PORTS.clock),
        logger,
        hostPersisted: persisted,
        metrics: c.resolve(PORTS.metrics),
      });
    }),
  );
  c.register(
    PORTS.store,
    single(() => {
      if (options.store) return options.store;
      if (config.store.kind === "redis") {
        return new RedisStore({
          ...config.store,
          logger,
          clock: c.resolve(PORTS.clock),
          maxDeliveries: config.dedupe.maxEntries,
        });
      }
      return new MemoryStore(c.resolve(PORTS.clock), { maxDeliveries: config.dedupe.maxEntries });
    }),
  );
  c.register(
    PORTS.verifiers,
    single(() => createVerifiersFor(prepared, options)),
  );
  c.register(
    PORTS.transformRunner,
    single(() =>
      (options.transformRunner ?? createTransformRunner)({
        transformsDir: config.transformsDir,
        timeoutMs: options.transformTimeoutMs ?? TRANSFORM_TIMEOUT_MS,
        reloadCheckMs: options.transformReloadCheckMs ?? DEFAULT_RELOAD_CHECK_MS,
        maxMemoryMb: config.transforms.maxMemoryMb,
        maxWorkers: config.transforms.maxWorkers,
        env: config.transforms.env,
        metrics: c.resolve(PORTS.metrics),
        logger,
      }),
    ),
  );
  return {
    clock: c.resolve(PORTS.clock),
    ids: c.resolve(PORTS.ids),
    metrics: c.resolve(PORTS.metrics),
    journal: c.resolve(PORTS.journal),
    store: c.resolve(PORTS.store),
    verifiers: c.resolve(PORTS.verifiers),
    transformRunner: c.resolve(PORTS.transformRunner),
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

/** @module The composition root: one child container per plugin instance, ports resolved once, every registration a value or a factory. */
import "reflect-metadata";
import { type DependencyContainer, instanceCachingFactory, container as rootContainer } from "tsyringe";
import { DEFAULT_DEADLINE_GRACE_MS, RunCompletionTracker } from "./actions/run-completion.js";
import type { ActionPolicy } from "./actions/validate-action.js";
import { systemClock } from "./clock.js";
import type { HookBus } from "./events.js";
import type { HostLogger } from "./host/contract.js";
import { createHooksHandler } from "./http/hooks-handler.js";
import { randomIds } from "./ids.js";
import { FileJournal } from "./journal/file-journal.js";
import type { Journal } from "./journal/journal.js";
import { createTransformRunner } from "./mapping/create-transform-runner.js";
import { MappingEngine } from "./mapping/mapping-engine.js";
import { MappingIndex } from "./mapping/mapping-index.js";
import { DEFAULT_RELOAD_CHECK_MS } from "./mapping/transform-loader.js";
import { TRANSFORM_TIMEOUT_MS } from "./mapping/transform-runner.js";
import { NO_METRICS } from "./metrics/metrics.js";
import { PromMetrics } from "./metrics/prom-metrics.js";
import type { HooksPluginOptions } from "./options.js";
import { createAuthenticator } from "./pipeline/authenticate.js";
import { createClientAddressResolver } from "./pipeline/client-address.js";
import { Resolver } from "./pipeline/resolve.js";
import { createPipeline } from "./pipeline/run-pipeline.js";
import type { PreparedHooks } from "./prepare-hooks.js";
import { credentialHeadersWith } from "./safety/credentials.js";
import { MemoryStore } from "./store/memory.js";
import { RedisStore } from "./store/redis.js";
import { PORTS, TOKENS } from "./tokens.js";
import { signatureHeadersFor } from "./verify/schemes/index.js";
import { createVerifiers } from "./verify/signature-verifier.js";

/** The journal port when nothing is recorded: the pipeline then builds no record at all. */
export const NO_JOURNAL: Journal = {
  open: async () => ({ unfinished: [], deliveries: [] }),
  admit: async () => undefined,
  handed: () => undefined,
  done: () => undefined,
  answered: () => undefined,
  close: async () => undefined,
};

export interface ContainerInputs {
  prepared: PreparedHooks;
  logger: HostLogger;
  bus: HookBus;
  options: HooksPluginOptions;
  /** The host's durability barrier, when it has one. */
  persisted?: (() => Promise<void>) | undefined;
}

export function buildHooksContainer({
  prepared,
  logger,
  bus,
  options,
  persisted,
}: ContainerInputs): DependencyContainer {
  const { config, mappings, signedPaths } = prepared;
  const c = rootContainer.createChildContainer();
  c.register(TOKENS.config, { useValue: config });
  c.register(TOKENS.mappings, { useValue: mappings });
  c.register(TOKENS.logger, { useValue: logger });
  c.register(TOKENS.bus, { useValue: bus });

  c.register(PORTS.clock, { useValue: options.clock ?? systemClock });
  c.register(PORTS.ids, { useValue: options.ids ?? randomIds });
  c.register(PORTS.journal, {
    useFactory: instanceCachingFactory((r) => {
      if (options.journal) return options.journal;
      // No journal when there is nowhere to keep one (a host without a state directory) or the config turns it off.
      if (config.journal.dir === undefined) return NO_JOURNAL;
      return new FileJournal({
        dir: config.journal.dir,
        fsync: config.journal.fsync,
        retainHours: config.journal.retainHours,
        deliveryWindowMs: config.dedupe.windowSeconds * 1000,
        maxDeliveries: config.dedupe.maxEntries,
        clock: r.resolve(PORTS.clock),
        logger,
        hostPersisted: persisted,
        metrics: r.resolve(TOKENS.metrics),
      });
    }),
  });
  c.register(PORTS.store, {
    useFactory: instanceCachingFactory((r) => {
      if (options.store) return options.store;
      if (config.store.kind === "redis") {
        return new RedisStore({ ...config.store, logger, clock: r.resolve(PORTS.clock) });
      }
      return new MemoryStore(r.resolve(PORTS.clock), { maxDeliveries: config.dedupe.maxEntries });
    }),
  });
  c.register(PORTS.verifiers, {
    useFactory: instanceCachingFactory(() =>
      (options.verifiers ?? createVerifiers)({ token: config.token, signedPaths }),
    ),
  });
  c.register(TOKENS.metrics, {
    useFactory: instanceCachingFactory(() => {
      if (options.metrics === false) return NO_METRICS;
      if (options.metrics) return options.metrics;
      // Label values come from the config only: a sender's path or payload never makes a new series.
      return new PromMetrics({
        hookPaths: mappings.flatMap((mapping) =>
          mapping.matchPath === undefined ? [] : [mapping.matchPath],
        ),
        mappingIds: mappings.map((mapping) => mapping.id),
      });
    }),
  });
  c.register(PORTS.transformRunner, {
    useFactory: instanceCachingFactory((r) =>
      (options.transformRunner ?? createTransformRunner)({
        transformsDir: config.transformsDir,
        timeoutMs: options.transformTimeoutMs ?? TRANSFORM_TIMEOUT_MS,
        reloadCheckMs: options.transformReloadCheckMs ?? DEFAULT_RELOAD_CHECK_MS,
        maxMemoryMb: config.transforms.maxMemoryMb,
        maxWorkers: config.transforms.maxWorkers,
        metrics: r.resolve(TOKENS.metrics),
        logger,
      }),
    ),
  });

  c.register(TOKENS.duplicates, {
    useFactory: instanceCachingFactory((r) => ({
      store: r.resolve(PORTS.store),
      keepMs: config.dedupe.windowSeconds * 1000,
      logger,
      metrics: r.resolve(TOKENS.metrics),
    })),
  });
  c.register(TOKENS.tracker, {
    useFactory: instanceCachingFactory(
      (r) =>
        new RunCompletionTracker(
          bus,
          logger,
          config.mainSessionKey,
          r.resolve(PORTS.ids),
          options.runDeadlineGraceMs ?? DEFAULT_DEADLINE_GRACE_MS,
          r.resolve(TOKENS.metrics),
        ),
    ),
  });
  c.register(TOKENS.pipeline, {
    useFactory: instanceCachingFactory((r) => {
      const clock = r.resolve(PORTS.clock);
      const ids = r.resolve(PORTS.ids);
      const policy: ActionPolicy = {
        sessionKeys: {
          allowRequestSessionKey: config.allowRequestSessionKey,
          allowedSessionKeyPrefixes: config.allowedSessionKeyPrefixes,
          defaultSessionKey: config.defaultSessionKey,
          mainSessionKey: config.mainSessionKey,
        },
        channels: config.channels,
        models: config.models,
        ids,
      };
      const engine = new MappingEngine({
        index: new MappingIndex(mappings),
        transforms: r.resolve(PORTS.transformRunner),
        policy,
        logger,
        clock,
      });
      const store = r.resolve(PORTS.store);
      const journal = r.resolve(PORTS.journal);
      return createPipeline({
        basePath: config.path,
        bodyTimeoutMs: config.bodyTimeoutMs,
        verifiers: r.resolve(PORTS.verifiers),
        duplicates: r.resolve(TOKENS.duplicates),
        credentialHeaders: credentialHeadersWith(
          [...signedPaths.values()].flatMap((path) => signatureHeadersFor(path.settings)),
        ),
        authenticate: createAuthenticator({
          store,
          clientAddress: createClientAddressResolver(config.trustedProxies),
          logger,
          clock,
          limit: config.authFailures.limit,
          windowMs: config.authFailures.windowSeconds * 1000,
          metrics: r.resolve(TOKENS.metrics),
        }),
        resolver: new Resolver({
          engine,
          policy,
          mainSessionKey: config.mainSessionKey,
          maxBodyBytes: config.maxBodyBytes,
          ids,
        }),
        journal: journal === NO_JOURNAL ? undefined : journal,
        storePayloads: config.journal.storePayloads,
        clock,
        tracker: r.resolve(TOKENS.tracker),
        metrics: r.resolve(TOKENS.metrics),
        exposeReplies: config.exposeReplies,
        bus,
        logger,
        ids,
        capture: options.capture,
      });
    }),
  });
  c.register(TOKENS.handler, {
    useFactory: instanceCachingFactory((r) => createHooksHandler(r.resolve(TOKENS.pipeline))),
  });
  return c;
}

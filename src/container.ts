/** @module Builds one child container per plugin instance; every registration is a value or a factory. */
import "reflect-metadata";
import { type DependencyContainer, instanceCachingFactory, container as rootContainer } from "tsyringe";
import { RequestDispatcher } from "./actions/dispatch-request.js";
import { RunCompletionTracker } from "./actions/run-completion.js";
import type { ResolvedHooksConfig } from "./config/resolve.js";
import type { HookBus } from "./events.js";
import type { CapturedRequest, HostLogger } from "./host/contract.js";
import { AuthFailureLimiter } from "./http/auth-failures.js";
import { createAuthenticator } from "./http/authenticate.js";
import { createClientAddressResolver } from "./http/client-address.js";
import { createHooksHandler } from "./http/hooks-handler.js";
import type { CompiledMapping } from "./mapping/compile-mappings.js";
import { DefaultMappingEngine } from "./mapping/mapping-engine.js";
import { MappingIndex } from "./mapping/mapping-index.js";
import { TransformLoader } from "./mapping/transform-loader.js";
import { type RuntimeOptions, TOKENS } from "./tokens.js";

export interface ContainerInputs {
  config: ResolvedHooksConfig;
  mappings: readonly CompiledMapping[];
  logger: HostLogger;
  bus: HookBus;
  options: RuntimeOptions;
  capture?: ((request: CapturedRequest) => void) | undefined;
}

export function buildHooksContainer(inputs: ContainerInputs): DependencyContainer {
  const c = rootContainer.createChildContainer();
  c.register(TOKENS.config, { useValue: inputs.config });
  c.register(TOKENS.mappings, { useValue: inputs.mappings });
  c.register(TOKENS.logger, { useValue: inputs.logger });
  c.register(TOKENS.bus, { useValue: inputs.bus });
  c.register(TOKENS.options, { useValue: inputs.options });
  c.register(TOKENS.capture, { useValue: { hook: inputs.capture } });

  c.register(TOKENS.actionPolicy, {
    useFactory: instanceCachingFactory((r) => {
      const config = r.resolve(TOKENS.config);
      return {
        sessionKeys: {
          allowRequestSessionKey: config.allowRequestSessionKey,
          allowedSessionKeyPrefixes: config.allowedSessionKeyPrefixes,
          defaultSessionKey: config.defaultSessionKey,
          mainSessionKey: config.mainSessionKey,
        },
        channels: config.channels,
        models: config.models,
      };
    }),
  });
  c.register(TOKENS.transformLoader, {
    useFactory: instanceCachingFactory(
      (r) =>
        new TransformLoader(
          r.resolve(TOKENS.config).transformsDir,
          r.resolve(TOKENS.options).transformReloadCheckMs,
        ),
    ),
  });
  c.register(TOKENS.mappingEngine, {
    useFactory: instanceCachingFactory((r) => {
      const mappings = r.resolve(TOKENS.mappings);
      return new DefaultMappingEngine({
        index: new MappingIndex(mappings),
        mappings,
        loader: r.resolve(TOKENS.transformLoader),
        policy: r.resolve(TOKENS.actionPolicy),
        logger: r.resolve(TOKENS.logger),
        transformTimeoutMs: r.resolve(TOKENS.options).transformTimeoutMs,
      });
    }),
  });
  c.register(TOKENS.dispatcher, {
    useFactory: instanceCachingFactory(
      (r) =>
        new RequestDispatcher(
          r.resolve(TOKENS.config),
          r.resolve(TOKENS.mappingEngine),
          r.resolve(TOKENS.actionPolicy),
        ),
    ),
  });
  c.register(TOKENS.tracker, {
    useFactory: instanceCachingFactory(
      (r) =>
        new RunCompletionTracker(
          r.resolve(TOKENS.bus),
          r.resolve(TOKENS.logger),
          r.resolve(TOKENS.config).mainSessionKey,
          r.resolve(TOKENS.options).runDeadlineGraceMs,
        ),
    ),
  });
  c.register(TOKENS.handler, {
    useFactory: instanceCachingFactory((r) => {
      const config = r.resolve(TOKENS.config);
      const logger = r.resolve(TOKENS.logger);
      return createHooksHandler({
        basePath: config.path,
        bodyTimeoutMs: config.bodyTimeoutMs,
        authenticate: createAuthenticator({
          token: config.token,
          limiter: new AuthFailureLimiter(
            config.authFailures.limit,
            config.authFailures.windowSeconds * 1000,
          ),
          clientAddress: createClientAddressResolver(config.trustedProxies),
          logger,
        }),
        dispatcher: r.resolve(TOKENS.dispatcher),
        tracker: r.resolve(TOKENS.tracker),
        bus: r.resolve(TOKENS.bus),
        logger,
        capture: r.resolve(TOKENS.capture).hook,
      });
    }),
  });
  return c;
}

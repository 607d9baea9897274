/** @module The one composition function: the plugin's request path and its service, built from the prepared config and the ports. */
import { isDeepStrictEqual } from "node:util";
import { DEFAULT_DEADLINE_GRACE_MS, RunCompletionTracker } from "./actions/run-completion.js";
import type { ActionPolicy } from "./actions/validate-action.js";
import type { AgentTurn, HookBus } from "./events.js";
import type { HostLogger, HostService, RouteHandler, StoredEvent } from "./host/contract.js";
import { createHooksHandler } from "./http/hooks-handler.js";
import { MappingEngine } from "./mapping/mapping-engine.js";
import { MappingIndex } from "./mapping/mapping-index.js";
import { Admission } from "./pipeline/admission.js";
import { TURN_ADMISSION_TIMEOUT_MS } from "./pipeline/admit-turns.js";
import { createAllowLists } from "./pipeline/allow-lists.js";
import { type AuthThrottle, createAuthThrottle, createCredentialJudge } from "./pipeline/credential-judge.js";
import { createBusDoor, type EventDoor } from "./pipeline/event-door.js";
import { createHandOff, type HandOff, type HandOffDeps } from "./pipeline/hand-off.js";
import { createRateLimiter } from "./pipeline/rate-limit.js";
import { recoverFromJournal } from "./pipeline/recover.js";
import type { CapturedRequest } from "./pipeline/request.js";
import { createPipeline, type Pipeline } from "./pipeline/run-pipeline.js";
import { createClientAddressResolver, createSourceAddressResolver } from "./pipeline/stages/admit.js";
import type { DuplicateDeps } from "./pipeline/stages/dedupe.js";
import { Resolver } from "./pipeline/stages/resolve.js";
import { TurnGate } from "./pipeline/turn-gate.js";
import type { TurnCap, TurnCaps } from "./pipeline/turn-key.js";
import {
  hookSecrets,
  loadAllTransforms,
  type PreparedHooks,
  type TransformLoadReport,
} from "./prepare-hooks.js";
import { credentialHeadersWith } from "./safety/credentials.js";
import { secretRedactor } from "./safety/secret-redaction.js";
import type { Ports } from "./tokens.js";
import { signatureHeadersFor } from "./verify/schemes/index.js";
import type { Verifiers } from "./verify/verifier.js";

export interface CompositionContext {
  logger: HostLogger;
  /** Where events go: the host's bus, or a replay's. */
  bus: HookBus;
  /** Receives every authenticated request whose body was read (`hooks serve --capture`). */
  capture?: ((request: CapturedRequest) => void) | undefined;
  /** Extra wait past an agent run's timeoutSeconds before its timeout summary. */
  runDeadlineGraceMs?: number | undefined;
  /** The host's admission of agent turns, asked before the journal accepts a request (absent: admitted). */
  admitAgentTurn?: ((turn: AgentTurn) => Promise<void>) | undefined;
  /** How long that admission may take (15 s). */
  turnAdmissionTimeoutMs?: number | undefined;
  /** Whether `maxConcurrentTurns` holds turns back (default); a replay runs none, so none ever waits there. */
  capTurns?: boolean | undefined;
  /** The host's check, at start, that it still holds what the journal says it stored. */
  checkStored?: ((events: readonly StoredEvent[]) => void) | undefined;
  /** How far the host's own state is on disk, when it syncs it now and then (see the host contract). */
  durableThrough?: (() => number | undefined) | undefined;
  /** What holds the host's state, named when a start rebuilds it (see the host contract). */
  stateName?: (() => string | undefined) | undefined;
  /** Told each transform's load result once the service started. */
  transformsLoaded?: ((reports: TransformLoadReport[]) => void) | undefined;
}

/** A config checked and its transforms loaded: `swap()` makes it the one new requests run on. */
export interface PendingSwap {
  reports: TransformLoadReport[];
  swap(): void;
}

export interface ComposedHooks {
  /** The request path new requests run on. */
  readonly pipeline: Pipeline;
  handler: RouteHandler;
  /** Starts what the request path needs (the store, the previous run's unfinished work, transforms) and stops it. */
  service: Omit<HostService, "id">;
  /**
   * Counts failed attempts at a host's own credential (`scope` names it) per client address, with the config in
   * force at each call: its store, `hooks.authFailures` and `hooks.trustedProxies`, so a reload applies here too.
   */
  authThrottle(scope: string): AuthThrottle;
  /**
   * Loads the transforms of `next` (a config prepared with the same ports' settings: store, journal, dedupe,
   * transforms) and returns the swap to it; nothing changes until `swap()`. Requests under way finish on the config
   * they started with; the store, the journal, the transform pool and the runs callers wait on carry on.
   */
  prepareSwap(next: PreparedHooks, verifiers: Verifiers): Promise<PendingSwap>;
}

export function composeHooks(
  prepared: PreparedHooks,
  ports: Ports,
  context: CompositionContext,
): ComposedHooks {
  const { config } = prepared;
  const lasting = lastingParts(prepared, ports, context);
  const { gate, capTurns } = lasting;
  const shared: Shared = { ports, ...lasting, context };
  let current = buildPipeline(prepared, ports.verifiers, new Admission(config.admission), shared);
  // Each request runs on the pipeline current when it arrived, to its end: a swap never changes one under way. A
  // plain field the handler reads, not a closure of this module: nothing here runs on a request.
  const serving = { pipeline: current.pipeline };
  return {
    get pipeline() {
      return current.pipeline;
    },
    handler: createHooksHandler(serving),
    authThrottle: (scope) => ({
      failed: (remoteAddress, headers) => current.authThrottle(scope).failed(remoteAddress, headers),
      succeeded: (remoteAddress, headers) => current.authThrottle(scope).succeeded(remoteAddress, headers),
    }),
    async prepareSwap(next, verifiers) {
      const reports = await loadAllTransforms(ports.transformRunner, next.mappings);
      return {
        reports,
        swap() {
          // Budgets held by requests under way stay with them; an unchanged budget is kept, so nothing is counted twice.
          const admission = isDeepStrictEqual(next.config.admission, current.prepared.config.admission)
            ? current.admission
            : new Admission(next.config.admission);
          current = buildPipeline(next, verifiers, admission, shared);
          serving.pipeline = current.pipeline;
          if (capTurns) gate.setCaps(turnCapsOf(next));
        },
      };
    },
    // Recovery runs once, under the config the instance started with: its dedupe window is one a reload keeps.
    service: hooksService(prepared, ports, context, lasting, current.duplicates),
  };
}

/** What outlives a config: the runs callers wait on, the turn gate, the door events leave by, the hand-off. */
interface Lasting {
  tracker: RunCompletionTracker;
  /** A reload keeps the turns waiting and gives the gate the new caps. */
  gate: TurnGate;
  capTurns: boolean;
  door: EventDoor;
  handOffDeps: HandOffDeps;
  handOff: HandOff;
}

function lastingParts(prepared: PreparedHooks, ports: Ports, context: CompositionContext): Lasting {
  const { logger, bus } = context;
  const { metrics } = ports;
  const tracker = new RunCompletionTracker(
    bus,
    logger,
    prepared.config.mainSessionKey,
    ports.ids,
    context.runDeadlineGraceMs ?? DEFAULT_DEADLINE_GRACE_MS,
    metrics,
  );
  const capTurns = context.capTurns ?? true;
  const gate = new TurnGate(capTurns ? turnCapsOf(prepared) : () => UNCAPPED, logger);
  metrics.agentTurnsQueued?.(() => gate.queued());
  const door = createBusDoor(bus);
  const handOffDeps: HandOffDeps = {
    journal: ports.journal,
    door,
    tracker,
    logger,
    gate,
    admitAgentTurn: context.admitAgentTurn,
    turnAdmissionTimeoutMs: context.turnAdmissionTimeoutMs ?? TURN_ADMISSION_TIMEOUT_MS,
  };
  return { tracker, gate, capTurns, door, handOffDeps, handOff: createHandOff(handOffDeps) };
}

/** Starts what the request path needs (the store, the previous run's unfinished work, transforms) and stops it. */
function hooksService(
  prepared: PreparedHooks,
  ports: Ports,
  context: CompositionContext,
  { tracker, gate, door, handOffDeps }: Lasting,
  duplicates: DuplicateDeps,
): ComposedHooks["service"] {
  const { store, journal, transformRunner } = ports;
  const stop = async () => {
    tracker.stop();
    // Waiting turns are still unhanded in the journal: the next start runs them.
    gate.stop();
    door.close();
    await Promise.all([transformRunner.close(), store.close(), journal.close()]);
  };
  return {
    async start() {
      try {
        tracker.start();
        gate.resume();
        await store.open?.();
        // Before the route takes requests: the previous run's unfinished work first, its delivery ids remembered.
        await recoverFromJournal({
          ...handOffDeps,
          duplicates,
          clock: ports.clock,
          checkStored: context.checkStored,
          durableThrough: context.durableThrough,
          stateName: context.stateName,
        });
        const reports = await loadAllTransforms(transformRunner, prepared.mappings);
        context.transformsLoaded?.(reports);
      } catch (error) {
        // A start that fails owns nothing afterwards: a host stops only services that started, and an open
        // store connection (with its reconnect timer) or a worker pool would keep the process alive.
        await stop().catch(() => undefined);
        throw error;
      }
    },
    drain: () => gate.pause(),
    stop,
  };
}

interface Shared extends Lasting {
  ports: Ports;
  context: CompositionContext;
}

/**
 * Each mapping's caps (its own `maxConcurrentTurns` and `maxQueuedTurns`, else `hooks.limits.default`'s), `/agent`'s (`hooks.limits.agent`,
 * else the default); a mapping a reload removed counts against the default.
 */
function turnCapsOf({ config, mappings }: PreparedHooks): TurnCaps {
  const fallback: TurnCap = {
    running: config.limits.default.maxConcurrentTurns,
    waiting: config.limits.default.maxQueuedTurns,
  };
  const byMapping = new Map(
    mappings.map((mapping) => [
      mapping.id,
      { running: mapping.maxConcurrentTurns, waiting: mapping.maxQueuedTurns },
    ]),
  );
  const agent: TurnCap = {
    running: config.limits.agent?.maxConcurrentTurns ?? fallback.running,
    waiting: config.limits.agent?.maxQueuedTurns ?? fallback.waiting,
  };
  return (key) => (key === "" ? agent : (byMapping.get(key) ?? fallback));
}

/** A replay's gate: it runs no turn, so none ever waits or is refused there. */
const UNCAPPED: TurnCap = { running: Number.POSITIVE_INFINITY, waiting: Number.POSITIVE_INFINITY };

interface Built {
  prepared: PreparedHooks;
  admission: Admission;
  duplicates: DuplicateDeps;
  pipeline: Pipeline;
  /** The host credential throttles of this config, made when first asked for. */
  authThrottle(scope: string): AuthThrottle;
}

/** The request path of one config, on the ports and run tracker of the instance. */
function buildPipeline(
  prepared: PreparedHooks,
  verifiers: Verifiers,
  admission: Admission,
  { ports, tracker, gate, handOff, context }: Shared,
): Built {
  const { config, mappings, signedPaths } = prepared;
  const { logger, bus } = context;
  const { store, journal, clock, ids, transformRunner, metrics } = ports;
  const policy = actionPolicyOf(prepared, ids);
  const duplicates: DuplicateDeps = { store, keepMs: config.dedupe.windowSeconds * 1000, logger, metrics };
  const clientAddress = createClientAddressResolver(config.trustedProxies);
  const authFailures = {
    store,
    clock,
    logger,
    limit: config.authFailures.limit,
    windowMs: config.authFailures.windowSeconds * 1000,
  };
  const authThrottle = authThrottles({ ...authFailures, clientAddress });
  const pipeline = createPipeline({
    basePath: config.path,
    sourceAddress: createSourceAddressResolver(config.trustedProxies),
    allowFor: createAllowLists(prepared),
    handOff,
    bodyTimeoutMs: config.bodyTimeoutMs,
    unverifiedBodyTimeoutMs: config.admission.unverifiedBodyTimeoutMs,
    admission,
    clientAddress,
    verifiers,
    duplicates,
    credentialHeaders: credentialHeadersWith(
      [...signedPaths.values()].flatMap((path) => signatureHeadersFor(path.settings)),
    ),
    redactSecrets: secretRedactor(hookSecrets(prepared)),
    judge: createCredentialJudge({ ...authFailures, metrics }),
    rateLimiter: createRateLimiter({ store, clock, logger, metrics }),
    directRateLimits: {
      wake: config.limits.wake?.rateLimit ?? config.limits.default?.rateLimit,
      agent: config.limits.agent?.rateLimit ?? config.limits.default?.rateLimit,
    },
    resolver: new Resolver({
      engine: new MappingEngine({
        index: new MappingIndex(mappings),
        transforms: transformRunner,
        policy,
        logger,
        clock,
      }),
      policy,
      mainSessionKey: config.mainSessionKey,
      maxBodyBytes: config.maxBodyBytes,
      maxTextChars: config.maxTextChars,
      ids,
    }),
    admitAgentTurn: context.admitAgentTurn,
    turnAdmissionTimeoutMs: context.turnAdmissionTimeoutMs ?? TURN_ADMISSION_TIMEOUT_MS,
    gate,
    journal,
    storePayloads: config.journal.storePayloads,
    largestBodyBytes: Math.max(config.maxBodyBytes, ...mappings.map((mapping) => mapping.maxBodyBytes)),
    clock,
    tracker,
    metrics,
    exposeReplies: config.exposeReplies,
    bus,
    logger,
    ids,
    capture: context.capture,
  });
  return { prepared, admission, duplicates, pipeline, authThrottle };
}

/** What an action may do under this config: session keys, agents, channels, models. */
export function actionPolicyOf({ config }: PreparedHooks, ids: Ports["ids"]): ActionPolicy {
  return {
    sessionKeys: {
      allowRequestSessionKey: config.allowRequestSessionKey,
      allowedSessionKeyPrefixes: config.allowedSessionKeyPrefixes,
      defaultSessionKey: config.defaultSessionKey,
      mainSessionKey: config.mainSessionKey,
    },
    agents: config.agents,
    channels: config.channels,
    models: config.models,
    ids,
  };
}

/** The host credential throttles of one config, each made when first asked for. */
function authThrottles(
  deps: Omit<Parameters<typeof createAuthThrottle>[0], "scope">,
): (scope: string) => AuthThrottle {
  const throttles = new Map<string, AuthThrottle>();
  return (scope) => {
    let throttle = throttles.get(scope);
    if (throttle === undefined) {
      throttle = createAuthThrottle({ ...deps, scope });
      throttles.set(scope, throttle);
    }
    return throttle;
  };
}

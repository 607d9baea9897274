/** @module Starts what runs behind the reference gateway's routes (the state database and its retention, the event record, the session, heartbeat and delivery subsystems) and stops it again. */
import path from "node:path";
import type { HookBus } from "../index.js";
import { startDeliverySubsystem } from "./delivery-subsystem.js";
import { type EventRecorder, startEventRecorder } from "./event-recorder.js";
import type { GatewaySections } from "./gateway-config.js";
import { startHeartbeatSubsystem } from "./heartbeat-subsystem.js";
import type { GatewayLogger } from "./logger.js";
import { createOutbox } from "./outbox.js";
import type { GatewayHost } from "./plugin-host.js";
import type { PluginServices } from "./plugin-services.js";
import { createRunner } from "./runners/create-runner.js";
import { createSessionStore, type SessionStore } from "./session-store.js";
import { type SessionSubsystem, startSessionSubsystem } from "./session-subsystem.js";
import { checkStateHolds } from "./state-check.js";
import { openStateDb, type StateDb } from "./state-db.js";
import { type Retention, startRetention } from "./state-retention.js";
import { type SyncMark, startSyncMark } from "./state-sync-mark.js";
import { logWriteError, type WriteErrorHandler } from "./write-errors.js";

/** Reasons a heartbeat's log line lists by name; the transcript has them all. */
const LOGGED_REASONS = 10;

export interface SubsystemsOptions {
  /** The plugin's host: told how to wait for the state's commits and how to check what the state holds. */
  host: GatewayHost;
  bus: HookBus;
  sections: GatewaySections;
  configDir: string;
  env: NodeJS.ProcessEnv;
  logger: GatewayLogger;
  stateDir: string;
  /** Append every bus event to this JSON-lines file. */
  recordFile: string | undefined;
  /** The plugin's services: stopped after heartbeat and delivery, before the record and the state. */
  services: PluginServices;
}

export interface Subsystems {
  session: SessionSubsystem;
  /**
   * Stops the session subsystem (aborting its turns), heartbeat and delivery, the plugin's services, the record and
   * retention, then closes the state.
   */
  stop(): Promise<void>;
}

export function startSubsystems(options: SubsystemsOptions): Subsystems {
  // A state or record write that fails is logged and survived, never a crash.
  const onError = logWriteError(options.logger);
  const { state, retention, mark } = openState(options, onError);
  const recorder = recordEvents(options, onError);
  const { session, heartbeat, delivery } = startSessionSubsystems(options, state);
  return {
    session,
    async stop() {
      await session.stop();
      // The plugin sends a batch's heartbeat requests at the end of its event-loop turn: the last batch's arrive
      // before the heartbeat stops (and runs what they asked for).
      await new Promise((resolve) => setImmediate(resolve));
      heartbeat.stop();
      delivery.stop();
      await options.services.stop();
      recorder?.stop();
      await retention.stop();
      mark.stop();
      state.close();
    },
  };
}

/** Opens the state database and starts its retention; the plugin's journal waits for the state's commits. */
function openState(
  options: SubsystemsOptions,
  onError: WriteErrorHandler,
): { state: StateDb; retention: Retention; mark: SyncMark } {
  const { logger, sections } = options;
  // Opened before anything starts: without better-sqlite3, or with a database it cannot use, the gateway does not start.
  const state = openStateDb(options.stateDir, {
    onError,
    onGiveUp: (writes) =>
      logger.error(
        "state writes given up after failing for too long; the journal finishes their requests at the next start",
        { writes },
      ),
  });
  // The plugin's journal marks a request done once the events it caused are committed here; they are synced about
  // once a second, and a start has the journal store again what was finished after the last sync.
  options.host.persisted = () => state.stored();
  const mark = startSyncMark(state);
  options.host.durableThrough = () => mark.durableThrough;
  options.host.stateName = () => state.file;
  const retention = startRetention(state, { retainDays: sections.state.retainDays, logger });
  return { state, retention, mark };
}

/** Records every bus event in `recordFile`, when there is one, and logs every hook request. */
function recordEvents(options: SubsystemsOptions, onError: WriteErrorHandler): EventRecorder | undefined {
  const { bus, logger } = options;
  // First subscriber, so the record shows events in emission order even when a listener emits more.
  const recorder = options.recordFile
    ? startEventRecorder(bus, path.resolve(options.recordFile), { onError })
    : undefined;
  bus.on("hooks:request", (event) =>
    logger.request({
      method: event.method,
      hook: event.hook,
      status: event.status,
      durationMs: event.durationMs,
      requestId: event.source.requestId,
      mappingId: event.mappingId,
    }),
  );
  return recorder;
}

/** The session store on the state, and the subsystems that work on it: sessions and turns, heartbeats, deliveries. */
function startSessionSubsystems(options: SubsystemsOptions, state: StateDb) {
  const { bus, host, logger, sections } = options;
  const store = createSessionStore(state, sections.session.lastRoute);
  // Asked by the plugin's start, before it takes requests: a database that lost what was acknowledged stops here.
  host.checkStored = (events) =>
    checkStateHolds(state, store, events, { retainDays: sections.state.retainDays });
  const outbox = createOutbox(state);
  const session = startSessionSubsystem({
    bus,
    store,
    runner: createRunner(sections.runner, options.configDir, options.env),
    logger,
    mainSessionKey: sections.session.mainKey,
    defaultAgentId: host.agents.defaultId,
  });
  const heartbeat = startHeartbeatSubsystem({
    bus,
    everySeconds: sections.heartbeat.everySeconds,
    beat: (reasons) => beat(store, logger, reasons),
  });
  const delivery = startDeliverySubsystem({
    bus,
    outbox,
    channels: sections.channels,
    logger,
    lastRoute: () => store.lastRoute(),
    setLastRoute: (route) => store.setLastRoute(route),
  });
  return { session, heartbeat, delivery };
}

/** A heartbeat: the main session's queued events move into the transcript, and one line says why it beat. */
function beat(store: SessionStore, logger: GatewayLogger, reasons: string[]): void {
  const drained = store.drain(reasons);
  // Under load one heartbeat answers thousands of finished runs; the transcript keeps every reason, the
  // log line the first few and the count.
  const shown = reasons.length > LOGGED_REASONS ? [...reasons.slice(0, LOGGED_REASONS), "…"] : reasons;
  logger.info("heartbeat", { reasons: shown.join(","), reasonCount: reasons.length, drained });
}

/** @module The host contract: the small interface the plugin needs from a gateway. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HostAgents } from "../config/agents.js";
import type { AgentTurn, HookBus } from "../events.js";

export type { HostAgents };

export type LogFields = Record<string, string | number | boolean | undefined>;

export interface HostLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * Handles one request under the route's path. The promise settles once the response has ended and the
 * request's work is done, so a host may run it inside a per-request scope; `true` means it answered.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export interface HttpRoute {
  /** Path prefix the route owns; requests at or below it reach the handler. */
  path: string;
  match: "prefix";
  /** `plugin`: the gateway does no auth of its own; the plugin authenticates every request. */
  auth: "plugin";
  handler: RouteHandler;
}

export interface HostService {
  id: string;
  start(): void | Promise<void>;
  /**
   * Optional: the host is about to stop and takes no new work; called before it waits for the work under way. The
   * plugin starts no more of the agent turns waiting for a slot: they stay in the journal for the next start.
   */
  drain?(): void;
  stop(): void | Promise<void>;
}

/** A system event of a request the journal marked done: the host had said it stored it (see `persisted`). */
export interface StoredEvent {
  eventId: string;
  sessionKey: string;
  /** When its request was admitted (epoch ms). */
  at: number;
}

/**
 * Why a host did not admit an agent turn, as the error `admitAgentTurn` rejects with carries it in `admission`:
 * `conflict` (the session's state forbids new work now: 409), `refused` (the host will not run it: 502),
 * `unavailable` (not now, e.g. draining for a reload: 503 with `Retry-After`, `retryAfterSeconds` when the host
 * knows). Any other rejection is taken as `refused`.
 */
export type TurnAdmissionRefusal = "conflict" | "refused" | "unavailable";

export interface TurnNotAdmitted extends Error {
  admission: TurnAdmissionRefusal;
  retryAfterSeconds?: number | undefined;
  /**
   * A `conflict` that may pass (a session between states): a turn that waited in its hook's queue asks again rather
   * than ending. A request's own turn is answered 409 either way.
   */
  retryable?: boolean | undefined;
}

export interface PluginHost {
  /** The whole gateway config, as the gateway loaded it (env substitution already applied). */
  config: unknown;
  /** Directory of the config file; relative config paths (transformsDir, a secret's `{ file }`) resolve against it. Default: cwd. */
  configDir?: string;
  /** The environment a secret's `{ env }` is read from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  logger: HostLogger;
  bus: HookBus;
  /** Channel ids the gateway can deliver to. Default: the seven built-in channels (no mattermost). */
  channels?: readonly string[];
  /** Which agents exist and which is the default. Default: one agent, `main`. */
  agents?: HostAgents;
  /** The main session's key, which no caller may target. Default: `main`. */
  mainSessionKey?: string;
  /** A directory the plugin may keep files in (the gateway's state directory). */
  stateDir?: string;
  /**
   * The host's own secrets that live in the plugin's process (the reference gateway's metrics token and inspector
   * key): the inspector hides them wherever a request carries them, as it hides the hook token, and the start names
   * the environment variables holding them when transforms run.
   */
  secrets?: readonly string[];
  registerHttpRoute(route: HttpRoute): void;
  registerService(service: HostService): void;
  /**
   * Resolves once everything the bus has delivered to the gateway so far is as durable as the gateway makes it
   * (rejects when it could not be stored). The journal marks a request done only after this, so a crash between
   * an event's emission and the gateway's write re-emits it (by its id) instead of losing it. Without it, a
   * request is done when its events were emitted.
   */
  persisted?(): Promise<void>;
  /**
   * Optional, with `persisted`: the moment (epoch ms) up to which what the host stored is on disk, for a host that
   * syncs its own state now and then rather than per request. Asked once at start: the system events of requests
   * the journal finished after it are delivered again, with their ids (a host that kept them answers `duplicate`),
   * so the host's state is rebuilt from the journal and needs no sync of its own per request. `0`: the host's state
   * is new (its file was missing), and everything the journal holds is delivered again.
   */
  durableThrough?(): number | undefined;
  /** Optional: what holds the host's state (the reference gateway's database file), named when a start rebuilds it. */
  stateName?(): string;
  /**
   * Asked at start with the system events of the newest requests the journal marked done (a few hundred). Throws,
   * with a message that names what is damaged and what to do, when the host does not hold them: its state was
   * replaced, emptied or lost writes it had synced. The plugin then delivers again every system event the journal
   * holds (by id) and asks once more; a second throw fails the plugin's start with that error. Only the newest are
   * asked: the cost does not grow with history.
   */
  checkStored?(events: readonly StoredEvent[]): void;
  /**
   * Asked for each agent turn a request plans, before the request is journaled: resolves once the host has accepted
   * the run (it will run it when the `session:agent-turn` event with the same `runId` arrives, without a second
   * one), rejects with a `TurnNotAdmitted` when it will not. The request is then answered with that refusal and not
   * accepted, so the sender's retry is safe. Without it, a host admits every turn itself.
   */
  admitAgentTurn?(turn: AgentTurn): Promise<void>;
}

export interface HookPlugin {
  id: string;
  name: string;
  configSchema: unknown;
  register(host: PluginHost): void;
}

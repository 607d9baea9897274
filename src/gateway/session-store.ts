/** @module The session state in the database: main-session queue and transcript, every session's messages, the last route. */
import type { SystemEvent, SystemEventOutcome } from "../events.js";
import type { LastRoute } from "./gateway-config.js";
import type { ChatMessage } from "./runners/runner-types.js";
import type { SqliteDatabase } from "./sqlite.js";
import type { StateDb } from "./state-db.js";
import { type QueuedSystemEvent, type QueueRow, queuedEventOf } from "./state-records.js";
import { SETTING } from "./state-schema.js";

/** Messages of a session handed to a runner: the key's last ones, read by index. */
export const HISTORY_WINDOW = 40;

/**
 * A key's last messages, newest first, through the (session_key, seq) index: the read costs the same however
 * many rows the other sessions have (a test checks the query plan).
 */
export const SELECT_HISTORY_SQL =
  "SELECT role, content FROM messages WHERE session_key = ? ORDER BY seq DESC LIMIT ?";

/**
 * What became of a system event here: `queued`, the first event waiting for the next heartbeat; `coalesced`, queued
 * behind events already waiting for it (they reach the session together); `duplicate`, an event id already queued,
 * in the transcript or among a session's messages, ignored.
 */
export type StoredOutcome = SystemEventOutcome["outcome"];

export interface SessionStore {
  /** Queues a system event for the main session until the next heartbeat; an event id seen before is ignored. */
  enqueue(event: SystemEvent): StoredOutcome;
  /**
   * Adds a system event for another session to that session's messages (`queued`: its next turn sees it); an event
   * id seen before is ignored (`duplicate`).
   */
  appendSystemNote(event: SystemEvent): StoredOutcome;
  pending(): QueuedSystemEvent[];
  /** Whether a system event of this id is stored: queued, in the transcript, or among a session's messages. */
  holds(eventId: string): boolean;
  /**
   * Moves every queued event into the transcript and records the heartbeat, in one transaction; returns how many
   * moved. When that cannot be written the events stay queued (and 0 moved), for the next heartbeat to try again.
   */
  drain(reasons: readonly string[]): number;
  /** The key's last HISTORY_WINDOW messages, oldest first. */
  history(sessionKey: string): ChatMessage[];
  appendHistory(sessionKey: string, messages: readonly ChatMessage[], runId?: string): void;
  lastRoute(): LastRoute | undefined;
  setLastRoute(route: LastRoute): void;
}

interface EventParams {
  at: number;
  eventId: string;
  text: string;
  untrusted: number;
  hook: string;
  requestId: string;
  mappingId: string | null;
  sessionKey: string;
}

function eventParams(event: SystemEvent): EventParams {
  return {
    at: Date.now(),
    eventId: event.eventId,
    text: event.text,
    untrusted: event.untrusted ? 1 : 0,
    hook: event.source.hook,
    requestId: event.source.requestId,
    mappingId: event.source.mappingId ?? null,
    sessionKey: event.sessionKey,
  };
}

function readRoute(json: string | undefined): LastRoute | undefined {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as LastRoute;
  } catch {
    return undefined;
  }
}

/** The store's statements, prepared once. */
function prepareStatements(db: SqliteDatabase) {
  return {
    // A main-session event goes to the queue and then the transcript, another session's to its messages: an id
    // seen again is looked for where that session's events go. The queue's own ids are in memory (queuedIds).
    insertQueued: db.prepare<[EventParams]>(
      `INSERT INTO queue (at, event_id, text, untrusted, hook, request_id, mapping_id)
       SELECT @at, @eventId, @text, @untrusted, @hook, @requestId, @mappingId
       WHERE NOT EXISTS (SELECT 1 FROM transcript WHERE event_id = @eventId)`,
    ),
    insertNote: db.prepare<[EventParams]>(
      "INSERT OR IGNORE INTO messages (session_key, at, event_id, role, content) VALUES (@sessionKey, @at, @eventId, 'system', @text)",
    ),
    insertMessage: db.prepare<[string, number, string | null, string, string]>(
      "INSERT INTO messages (session_key, at, run_id, role, content) VALUES (?, ?, ?, ?, ?)",
    ),
    selectQueue: db.prepare<[], QueueRow>("SELECT * FROM queue ORDER BY seq"),
    selectQueuedIds: db.prepare<[], string>("SELECT event_id FROM queue").pluck(),
    // The queue's rows move as they are, in order; the transcript's unique event id keeps a repeat out.
    moveQueue: db.prepare(
      `INSERT OR IGNORE INTO transcript (at, kind, event_id, text, untrusted, hook, request_id, mapping_id)
       SELECT at, 'system-event', event_id, text, untrusted, hook, request_id, mapping_id FROM queue ORDER BY seq`,
    ),
    clearQueue: db.prepare("DELETE FROM queue"),
    insertHeartbeat: db.prepare<[number, string, number]>(
      "INSERT INTO transcript (at, kind, reasons, drained) VALUES (?, 'heartbeat', ?, ?)",
    ),
    selectHistory: db.prepare<[string, number], ChatMessage>(SELECT_HISTORY_SQL),
    // Both through unique indexes on event_id.
    inTranscript: db.prepare<[string], number>("SELECT 1 FROM transcript WHERE event_id = ?").pluck(),
    inMessages: db.prepare<[string], number>("SELECT 1 FROM messages WHERE event_id = ?").pluck(),
    selectSetting: db.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck(),
    upsertSetting: db.prepare<[string, string]>(
      "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * The main session's queue: its system events wait there for the next heartbeat, which moves them into the
 * transcript. `queuedIds` are the ids in the queue table.
 */
function mainSessionQueue(
  state: StateDb,
  sql: Statements,
  queuedIds: Set<string>,
): Pick<SessionStore, "enqueue" | "pending" | "drain"> {
  return {
    enqueue(event) {
      if (queuedIds.has(event.eventId)) return "duplicate";
      // A drain commits at once, so the transcript is read as it stands; one indexed lookup.
      if (sql.inTranscript.get(event.eventId) !== undefined) return "duplicate";
      const outcome = queuedIds.size === 0 ? "queued" : "coalesced";
      queuedIds.add(event.eventId);
      const params = eventParams(event);
      state.write(() => sql.insertQueued.run(params));
      return outcome;
    },
    pending() {
      state.flush();
      return sql.selectQueue.all().map(queuedEventOf);
    },
    drain(reasons) {
      let drained = 0;
      const written = state.transact(() => {
        drained = sql.moveQueue.run().changes;
        sql.clearQueue.run();
        sql.insertHeartbeat.run(Date.now(), JSON.stringify(reasons), drained);
      });
      if (!written) return 0;
      queuedIds.clear();
      return drained;
    },
  };
}

/** Every session's messages: the system notes of sessions other than the main one, and the turns' history. */
function sessionMessages(
  state: StateDb,
  sql: Statements,
): Pick<SessionStore, "appendSystemNote" | "history" | "appendHistory"> {
  // Keys with messages written this turn and not yet committed: reading one of them commits first.
  const unflushedKeys = new Set<string>();
  state.onFlush(() => unflushedKeys.clear());
  return {
    appendSystemNote(event) {
      // An uncommitted note of this turn is not seen here; the insert still ignores it.
      if (sql.inMessages.get(event.eventId) !== undefined) return "duplicate";
      const params = eventParams(event);
      unflushedKeys.add(event.sessionKey);
      state.write(() => sql.insertNote.run(params));
      return "queued";
    },
    history(key) {
      if (unflushedKeys.has(key)) state.flush();
      return sql.selectHistory.all(key, HISTORY_WINDOW).reverse();
    },
    appendHistory(key, messages, runId) {
      const at = Date.now();
      const rows = messages.map(({ role, content }) => [key, at, runId ?? null, role, content] as const);
      unflushedKeys.add(key);
      state.write(() => {
        for (const row of rows) sql.insertMessage.run(...row);
      });
    },
  };
}

/** The last route deliveries went to, kept in the settings. */
function lastRouteSetting(
  state: StateDb,
  sql: Statements,
  initialRoute: LastRoute | undefined,
): Pick<SessionStore, "lastRoute" | "setLastRoute"> {
  // The database is newer than the config: a delivery since the config was written moved the route.
  let route = readRoute(sql.selectSetting.get(SETTING.lastRoute)) ?? initialRoute;
  return {
    lastRoute: () => route,
    setLastRoute(next) {
      if (route?.channel === next.channel && route.to === next.to) return;
      route = next;
      const json = JSON.stringify(next);
      // When it cannot be written the route still moves for this run; only a restart would forget it.
      state.write(() => sql.upsertSetting.run(SETTING.lastRoute, json));
    },
  };
}

/**
 * Events carry their ids so that one re-emitted after a crash of the plugin (it is not sure it was handed over)
 * is dropped: a system event whose id is queued, in the transcript or among a session's messages is ignored.
 */
export function createSessionStore(state: StateDb, initialRoute: LastRoute | undefined): SessionStore {
  const sql = prepareStatements(state.db);
  // The ids in the queue table: kept here instead of in an index (see the schema), cleared by a drain that commits.
  const queuedIds = new Set(sql.selectQueuedIds.all());
  return {
    ...mainSessionQueue(state, sql, queuedIds),
    ...sessionMessages(state, sql),
    holds(eventId) {
      state.flush();
      return (
        queuedIds.has(eventId) ||
        sql.inTranscript.get(eventId) !== undefined ||
        sql.inMessages.get(eventId) !== undefined
      );
    },
    ...lastRouteSetting(state, sql, initialRoute),
  };
}

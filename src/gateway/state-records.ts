/** @module The state database's rows as records: the shapes `hooks state --json` prints, with ISO times. */
import type { EventSource } from "../events.js";
import type { ChatMessage } from "./runners/runner-types.js";

export interface QueuedSystemEvent {
  kind: "system-event";
  /** When it was queued. */
  at: string;
  eventId: string;
  text: string;
  untrusted: boolean;
  source: EventSource;
}

export interface HeartbeatEntry {
  kind: "heartbeat";
  /** When the heartbeat ran. */
  at: string;
  reasons: string[];
  /** How many events it moved from the queue; they are the entries just before it. */
  drained: number;
}

/** A drained event keeps the time it was queued; the heartbeat after it says when it was drained. */
export type TranscriptEntry = QueuedSystemEvent | HeartbeatEntry;

export interface HistoryEntry extends ChatMessage {
  sessionKey: string;
  at: string;
  runId?: string;
  /** Set on a system note (a system event for a session other than the main one). */
  eventId?: string;
}

/** What the delivery subsystem records for a `delivery:send`; the outbox adds the time. */
export interface OutboxEntry {
  runId: string;
  requestId: string;
  hook: string;
  mappingId?: string;
  /** The channel the action asked for (`last` included). */
  requested: string;
  channel: string;
  to?: string;
  text: string;
  status: "delivered" | "undeliverable";
  reason?: string;
}

export interface OutboxRecord extends OutboxEntry {
  at: string;
}

interface SourceColumns {
  hook: string;
  request_id: string;
  mapping_id: string | null;
}

export interface QueueRow extends SourceColumns {
  at: number;
  event_id: string;
  text: string;
  untrusted: number;
}

export interface TranscriptRow {
  at: number;
  kind: "system-event" | "heartbeat";
  event_id: string | null;
  text: string | null;
  untrusted: number | null;
  hook: string | null;
  request_id: string | null;
  mapping_id: string | null;
  reasons: string | null;
  drained: number | null;
}

export interface MessageRow {
  session_key: string;
  at: number;
  run_id: string | null;
  event_id: string | null;
  role: ChatMessage["role"];
  content: string;
}

export interface OutboxRow {
  at: number;
  run_id: string;
  request_id: string;
  hook: string;
  mapping_id: string | null;
  requested: string;
  channel: string;
  recipient: string | null;
  text: string;
  status: OutboxEntry["status"];
  reason: string | null;
}

const isoTime = (ms: number): string => new Date(ms).toISOString();

function sourceOf(row: SourceColumns): EventSource {
  const source: EventSource = { hook: row.hook, requestId: row.request_id };
  if (row.mapping_id !== null) source.mappingId = row.mapping_id;
  return source;
}

export function queuedEventOf(row: QueueRow): QueuedSystemEvent {
  return {
    kind: "system-event",
    at: isoTime(row.at),
    eventId: row.event_id,
    text: row.text,
    untrusted: row.untrusted === 1,
    source: sourceOf(row),
  };
}

function parseReasons(json: string | null): string[] {
  try {
    const reasons: unknown = JSON.parse(json ?? "[]");
    return Array.isArray(reasons) ? reasons.map(String) : [];
  } catch {
    return [];
  }
}

export function transcriptEntryOf(row: TranscriptRow): TranscriptEntry {
  if (row.kind === "heartbeat") {
    return {
      kind: "heartbeat",
      at: isoTime(row.at),
      reasons: parseReasons(row.reasons),
      drained: row.drained ?? 0,
    };
  }
  return queuedEventOf({
    at: row.at,
    event_id: row.event_id ?? "",
    text: row.text ?? "",
    untrusted: row.untrusted ?? 1,
    hook: row.hook ?? "",
    request_id: row.request_id ?? "",
    mapping_id: row.mapping_id,
  });
}

export function historyEntryOf(row: MessageRow): HistoryEntry {
  const entry: HistoryEntry = {
    sessionKey: row.session_key,
    at: isoTime(row.at),
    role: row.role,
    content: row.content,
  };
  if (row.run_id !== null) entry.runId = row.run_id;
  if (row.event_id !== null) entry.eventId = row.event_id;
  return entry;
}

export function outboxRecordOf(row: OutboxRow): OutboxRecord {
  const record: OutboxRecord = {
    at: isoTime(row.at),
    runId: row.run_id,
    requestId: row.request_id,
    hook: row.hook,
    requested: row.requested,
    channel: row.channel,
    text: row.text,
    status: row.status,
  };
  if (row.mapping_id !== null) record.mappingId = row.mapping_id;
  if (row.recipient !== null) record.to = row.recipient;
  if (row.reason !== null) record.reason = row.reason;
  return record;
}

/** @module The session state on disk: main-session queue and transcript, per-key histories, the last route. */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { EventSource, SystemEvent } from "../events.js";
import type { LastRoute } from "./gateway-config.js";
import {
  createJsonlWriter,
  parseJsonl,
  readJsonFile,
  readJsonl,
  reportOnStderr,
  toJsonLines,
  type WriteErrorHandler,
  writeFileAtomic,
} from "./jsonl-file.js";
import type { ChatMessage } from "./runners/runner-types.js";

/** How many session histories are kept in memory at once. */
const CACHED_HISTORIES = 256;
/** Messages of a session kept in memory and handed to a runner; the file keeps them all. */
export const HISTORY_WINDOW = 40;

/** File names inside the state directory; docs/gateway.md describes the layout. */
export const STATE_FILES = {
  queue: "queue.jsonl",
  transcript: "transcript.jsonl",
  lastRoute: "last-route.json",
  outbox: "outbox.jsonl",
  sessions: "sessions.jsonl",
} as const;

export interface QueuedSystemEvent {
  kind: "system-event";
  at: string;
  eventId: string;
  text: string;
  untrusted: boolean;
  source: EventSource;
}

/**
 * A drained event is its queued record, byte for byte; the heartbeat line after it says when it was drained
 * (`at`) and how many lines before it it drained.
 */
export type TranscriptEntry =
  | QueuedSystemEvent
  | { kind: "heartbeat"; at: string; reasons: string[]; drained: number };

export interface HistoryEntry extends ChatMessage {
  sessionKey: string;
  at: string;
  runId?: string;
}

export interface SessionStore {
  readonly stateDir: string;
  /** Queues a system event for the main session until the next heartbeat. */
  enqueue(event: SystemEvent): void;
  pending(): readonly QueuedSystemEvent[];
  /**
   * Moves every queued event into the transcript, then records the heartbeat; returns how many moved. When the
   * transcript cannot be written the events stay queued (and 0 moved), for the next heartbeat to try again.
   */
  drain(reasons: readonly string[]): number;
  history(sessionKey: string): readonly ChatMessage[];
  appendHistory(sessionKey: string, messages: readonly ChatMessage[], runId?: string): void;
  lastRoute(): LastRoute | undefined;
  setLastRoute(route: LastRoute): void;
  close(): void;
}

/**
 * A 52-bit hash of a session key. The store remembers which keys have history by these hashes, not by the
 * keys: every `/agent` call without a key starts a one-shot `hook:<uuid>` session, and a million of those
 * would otherwise keep a million strings alive. A collision (about one in 10^9 after a million keys) reads
 * the log and finds nothing; 52 bits because a read of a large log per collision is not cheap.
 */
export function sessionKeyHash(key: string): number {
  let low = 0x811c9dc5;
  let high = 0x050c5d1f;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    low = Math.imul(low ^ code, 0x01000193);
    high = Math.imul(high ^ code, 0x01000193) ^ (low >>> 13);
  }
  return (high & 0xfffff) * 0x100000000 + (low >>> 0);
}

/** Hashes of the session keys present in the log, read from the start of each line (where `sessionKey` is). */
function knownSessionKeys(file: string): Set<number> {
  const keys = new Set<number>();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return keys;
  }
  for (const match of text.matchAll(/^\{"sessionKey":("(?:[^"\\]|\\.)*")/gm)) {
    try {
      keys.add(sessionKeyHash(JSON.parse(match[1]!) as string));
    } catch {
      // A torn last line: its key, if any, was never complete.
    }
  }
  return keys;
}

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines++;
  return lines;
}

/**
 * The queued events a previous run left. A file from an older version (records without `kind`) or ending in
 * a torn line is rewritten whole, so that its lines can later move to the transcript byte for byte.
 */
function loadQueue(queueFile: string): QueuedSystemEvent[] {
  let text: string;
  try {
    text = readFileSync(queueFile, "utf8");
  } catch {
    return [];
  }
  // Only records: a stray `null` or number in the file is dropped with the rest of what cannot be an event.
  const queue = parseJsonl<QueuedSystemEvent>(text).filter(
    (event) => event !== null && typeof event === "object" && !Array.isArray(event),
  );
  const lines = text.split("\n").filter((line) => line.trim() !== "").length;
  const clean =
    text === "" ||
    (text.endsWith("\n") && lines === queue.length && queue.every((event) => event.kind === "system-event"));
  if (clean) return queue;
  // An old record has no `kind`; it goes first, as in records written now.
  const normalised = queue.map(({ kind: _kind, ...event }) => ({ kind: "system-event" as const, ...event }));
  writeFileAtomic(queueFile, toJsonLines(normalised));
  return normalised;
}

export interface SessionStoreOptions {
  /** Told when a state file cannot be written (a full disk, say); the store keeps going. Default: a line on stderr. */
  onError?: WriteErrorHandler;
}

export function createSessionStore(
  stateDir: string,
  initialRoute: LastRoute | undefined,
  options: SessionStoreOptions = {},
): SessionStore {
  const onError = options.onError ?? reportOnStderr;
  const file = (name: string) => path.join(stateDir, name);
  const queueFile = file(STATE_FILES.queue);
  const queue = loadQueue(queueFile);
  const queueWriter = createJsonlWriter(queueFile, { onError });
  const transcript = createJsonlWriter(file(STATE_FILES.transcript), { onError });
  // Every session's messages in one append-only log: a one-shot `hook:<uuid>` session costs a line, not a file.
  const sessionsFile = file(STATE_FILES.sessions);
  const sessionLog = createJsonlWriter(sessionsFile, { onError });
  const known = knownSessionKeys(sessionsFile);
  // Recently used histories stay in memory (their last HISTORY_WINDOW messages); the rest are read again when needed.
  const histories = new Map<string, ChatMessage[]>();
  // The state file is newer than the config: a delivery since the config was written moved the route.
  let route = readJsonFile<LastRoute>(file(STATE_FILES.lastRoute)) ?? initialRoute;

  const session = (key: string): ChatMessage[] => {
    let messages = histories.get(key);
    if (messages) {
      histories.delete(key);
    } else {
      messages = [];
      if (known.has(sessionKeyHash(key))) {
        // Lines still waiting for this turn's flush belong to the history too.
        sessionLog.flush();
        messages = readJsonl<HistoryEntry>(sessionsFile)
          .filter((entry) => entry.sessionKey === key)
          .slice(-HISTORY_WINDOW)
          .map(({ role, content }) => ({ role, content }));
      }
      if (histories.size >= CACHED_HISTORIES) histories.delete(histories.keys().next().value as string);
    }
    histories.set(key, messages);
    return messages;
  };

  // The queue file as bytes. If someone removed it, or a failed write left it short of the events in memory,
  // those events are written out instead.
  const queuedBytes = (events: readonly QueuedSystemEvent[]): Buffer => {
    try {
      const bytes = readFileSync(queueFile);
      if (countLines(bytes) === events.length) return bytes;
    } catch {
      // removed: fall through
    }
    return Buffer.from(toJsonLines(events));
  };

  return {
    stateDir,
    enqueue(event) {
      const queued: QueuedSystemEvent = {
        kind: "system-event",
        at: new Date().toISOString(),
        eventId: event.eventId,
        text: event.text,
        untrusted: event.untrusted,
        source: event.source,
      };
      queue.push(queued);
      queueWriter.append(queued);
    },
    pending: () => queue,
    drain(reasons) {
      let drained = queue.length;
      if (drained > 0) {
        queueWriter.flush();
        // The queue file's lines move as they are: no event is parsed or serialised again. Under load a
        // heartbeat drains thousands, and re-serialising them stalled every request behind it.
        if (!transcript.appendBytes(queuedBytes(queue))) drained = 0;
      }
      transcript.append({ kind: "heartbeat", at: new Date().toISOString(), reasons: [...reasons], drained });
      // Written to the transcript first: a crash or a failed write in between repeats events rather than losing them.
      if (!transcript.flush() || drained === 0) return 0;
      queueWriter.truncate();
      queue.length = 0;
      return drained;
    },
    history: (key) => session(key),
    appendHistory(key, messages, runId) {
      const cached = session(key);
      const at = new Date().toISOString();
      for (const { role, content } of messages) {
        sessionLog.append(
          runId === undefined
            ? { sessionKey: key, at, role, content }
            : { sessionKey: key, at, runId, role, content },
        );
        cached.push({ role, content });
      }
      known.add(sessionKeyHash(key));
      if (cached.length > HISTORY_WINDOW) cached.splice(0, cached.length - HISTORY_WINDOW);
    },
    lastRoute: () => route,
    setLastRoute(next) {
      if (route?.channel === next.channel && route.to === next.to) return;
      route = next;
      const routeFile = file(STATE_FILES.lastRoute);
      try {
        writeFileAtomic(routeFile, `${JSON.stringify(next)}\n`);
      } catch (error) {
        // The route still moves for this run; only a restart would forget it.
        onError(error as NodeJS.ErrnoException, routeFile);
      }
    },
    close() {
      queueWriter.close();
      transcript.close();
      sessionLog.close();
    },
  };
}

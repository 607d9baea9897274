/** @module The session state on disk: main-session queue and transcript, per-key histories, the last route. */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import type { EventSource, SystemEvent } from "../../events.js";
import type { LastRoute } from "./gateway-config.js";
import { appendJsonl, createJsonlWriter, readJsonFile, readJsonl, writeFileAtomic } from "./jsonl-file.js";
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
  sessions: "sessions",
} as const;

export interface QueuedSystemEvent {
  at: string;
  eventId: string;
  text: string;
  untrusted: boolean;
  source: EventSource;
}

export type TranscriptEntry =
  | ({ kind: "system-event"; queuedAt: string } & QueuedSystemEvent)
  | { at: string; kind: "heartbeat"; reasons: string[]; drained: number };

export interface HistoryEntry extends ChatMessage {
  at: string;
  runId?: string;
}

export interface SessionStore {
  readonly stateDir: string;
  /** Queues a system event for the main session until the next heartbeat. */
  enqueue(event: SystemEvent): void;
  pending(): readonly QueuedSystemEvent[];
  /** Moves every queued event into the transcript, then records the heartbeat; returns how many moved. */
  drain(reasons: readonly string[]): number;
  history(sessionKey: string): readonly ChatMessage[];
  appendHistory(sessionKey: string, messages: readonly ChatMessage[], runId?: string): void;
  sessionFile(sessionKey: string): string;
  lastRoute(): LastRoute | undefined;
  setLastRoute(route: LastRoute): void;
  close(): void;
}

function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A file name for any session key: readable when short and safe, hashed when it would be too long. */
export function sessionFileName(sessionKey: string): string {
  const encoded = encodeURIComponent(sessionKey).replace(/\*/g, "%2A").replace(/^\./, "%2E");
  if (encoded.length <= 180) return `${encoded}.jsonl`;
  const hash = createHash("sha256").update(sessionKey).digest("hex").slice(0, 32);
  return `${encoded.slice(0, 100)}~${hash}.jsonl`;
}

export function createSessionStore(stateDir: string, initialRoute: LastRoute | undefined): SessionStore {
  const file = (name: string) => path.join(stateDir, name);
  const queue = readJsonl<QueuedSystemEvent>(file(STATE_FILES.queue));
  const queueWriter = createJsonlWriter(file(STATE_FILES.queue));
  const transcript = createJsonlWriter(file(STATE_FILES.transcript));
  // Recently used histories stay in memory; the rest are read again from their file when needed.
  const histories = new Map<string, ChatMessage[]>();
  // The state file is newer than the config: a delivery since the config was written moved the route.
  let route = readJsonFile<LastRoute>(file(STATE_FILES.lastRoute)) ?? initialRoute;

  const sessionsDir = path.join(stateDir, STATE_FILES.sessions);
  const sessionFile = (key: string) => path.join(sessionsDir, sessionFileName(key));
  // File names known to exist, read once: a new key (every `hook:<uuid>`) costs no failed read.
  const existing = new Set(listFiles(sessionsDir));
  let sessionsDirMade = existing.size > 0;
  const session = (key: string): ChatMessage[] => {
    let messages = histories.get(key);
    if (messages) {
      histories.delete(key);
    } else {
      const name = sessionFileName(key);
      messages = existing.has(name)
        ? readJsonl<HistoryEntry>(path.join(sessionsDir, name))
            .slice(-HISTORY_WINDOW)
            .map(({ role, content }) => ({ role, content }))
        : [];
      if (histories.size >= CACHED_HISTORIES) histories.delete(histories.keys().next().value as string);
    }
    histories.set(key, messages);
    return messages;
  };

  return {
    stateDir,
    enqueue(event) {
      const queued: QueuedSystemEvent = {
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
      const at = new Date().toISOString();
      const drained = queue.splice(0, queue.length);
      for (const event of drained)
        transcript.append({ ...event, at, kind: "system-event", queuedAt: event.at });
      transcript.append({ at, kind: "heartbeat", reasons: [...reasons], drained: drained.length });
      // Written to the transcript first: a crash in between repeats events rather than losing them.
      if (drained.length > 0) {
        transcript.flush();
        queueWriter.close();
        writeFileAtomic(file(STATE_FILES.queue), "");
      }
      return drained.length;
    },
    history: (key) => session(key),
    appendHistory(key, messages, runId) {
      const cached = session(key);
      const at = new Date().toISOString();
      if (!sessionsDirMade) {
        mkdirSync(sessionsDir, { recursive: true });
        sessionsDirMade = true;
      }
      existing.add(sessionFileName(key));
      // Opened per append rather than held open: one gateway may see many thousands of session keys.
      appendJsonl(
        sessionFile(key),
        messages.map(({ role, content }) =>
          runId === undefined ? { at, role, content } : { at, runId, role, content },
        ),
      );
      for (const { role, content } of messages) cached.push({ role, content });
      if (cached.length > HISTORY_WINDOW) cached.splice(0, cached.length - HISTORY_WINDOW);
    },
    sessionFile,
    lastRoute: () => route,
    setLastRoute(next) {
      if (route?.channel === next.channel && route.to === next.to) return;
      route = next;
      writeFileAtomic(file(STATE_FILES.lastRoute), `${JSON.stringify(next)}\n`);
    },
    close() {
      queueWriter.close();
      transcript.close();
    },
  };
}

/** @module The inspector's login: a key compared in constant time, exchanged once for an HttpOnly, SameSite=Strict session cookie. */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { createTokenComparer } from "../verify/token.js";

export const SESSION_COOKIE = "hooks_inspector";
/** A session lasts a working day; the link `hooks serve` prints opens a new one. */
const SESSION_MS = 12 * 60 * 60 * 1000;
/** Sessions kept at once; past it the oldest is dropped (a script that logs in in a loop cannot fill memory). */
const MAX_SESSIONS = 64;

export interface InspectorSessions {
  /** Whether the key is the inspector's (constant time). */
  keyMatches(presented: string): boolean;
  /** A new session's cookie header value. */
  open(now?: number): string;
  /** The request carries a live session cookie. */
  valid(req: IncomingMessage, now?: number): boolean;
  /** Ends the request's session; the cookie header value that clears it. */
  close(req: IncomingMessage): string;
}

export function createInspectorSessions(key: string, cookiePath: string): InspectorSessions {
  const matches = createTokenComparer(key);
  const sessions = new Map<string, number>();
  const attributes = `HttpOnly; SameSite=Strict; Path=${cookiePath}`;
  return {
    keyMatches: (presented) => matches(presented),
    open(now = Date.now()) {
      const id = randomBytes(32).toString("base64url");
      for (const [old, expires] of sessions) if (expires <= now) sessions.delete(old);
      while (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      sessions.set(id, now + SESSION_MS);
      return `${SESSION_COOKIE}=${id}; ${attributes}; Max-Age=${SESSION_MS / 1000}`;
    },
    valid(req, now = Date.now()) {
      const id = sessionIdOf(req);
      const expires = id === undefined ? undefined : sessions.get(id);
      return expires !== undefined && expires > now;
    },
    close(req) {
      const id = sessionIdOf(req);
      if (id !== undefined) sessions.delete(id);
      return `${SESSION_COOKIE}=; ${attributes}; Max-Age=0`;
    },
  };
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=");
  }
  return undefined;
}

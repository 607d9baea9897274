/** @module What the pipeline works on: a request independent of node:http (a live socket or a replayed fixture), and its answer. */
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";

export interface PipelineRequest {
  method: string;
  /** Path and query as sent (`/hooks/wake?x=1`). */
  url: string;
  /** Header names lower-cased, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The peer's address; forwarded headers are judged against `hooks.trustedProxies`. */
  remoteAddress: string | undefined;
  /** The body bytes, not read yet: the pipeline reads them only once the request may succeed. */
  body: Readable;
  /** The caller's connection, for a stage that waits on it; a replay has none (`CALLER_GONE`). */
  hungUp?: HangUp | undefined;
  /** The journal key of the request this one replays (the inspector's replay); recorded with its admission. */
  replayOf?: string | undefined;
}

/**
 * Whether the caller left before its answer did. Watched only by a stage that waits on the caller (a caller waiting
 * for its turn): most requests never look, so nothing is allocated or listened to for them.
 */
export interface HangUp {
  /** True once the connection closed before the answer left. */
  readonly happened: boolean;
  /** Calls `listener` once when the connection closes; returns the function that stops watching. */
  watch(listener: () => void): () => void;
}

/** A caller already gone (a replay, nobody waiting): waiting stages answer at once. */
export const CALLER_GONE: HangUp = Object.freeze({ happened: true, watch: () => () => {} });

export interface PipelineResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text; undefined for 204. */
  body: string | undefined;
}

/** Where the answer goes: the HTTP adapter writes it to the socket (resolving once it has ended), replay keeps it. */
export interface Responder {
  respond(response: PipelineResponse): Promise<void>;
}

/** An authenticated request as the pipeline read it, credentials removed: what `hooks serve --capture` writes. */
export interface CapturedRequest {
  requestId: string;
  method: string;
  hook: string;
  /** Request headers without credentials. */
  headers: Record<string, string>;
  /** Query parameters without credentials. */
  query: Record<string, string>;
  /** The exact bytes the pipeline read. */
  rawBody: Buffer;
}

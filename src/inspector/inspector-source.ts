/** @module What the inspector reads: the list, one request's detail, a dry run and a replay, redacted; the one contract every host's page is built on. */

export interface InspectorFilter {
  /** "2xx" | "4xx" | "5xx" | an exact status ("401") | a state ("refused", "duplicate", "pending", …). */
  status?: string;
  hook?: string;
  /** A substring of the request id, hook, mapping id, reason code or client address (any case). */
  text?: string;
  /** Default 100, at most 500. */
  limit?: number;
  /**
   * Only requests older than this (epoch ms), read from the journal past what is kept in memory: the page's
   * "older" button. Without it the list is the newest requests in memory, cheap enough to poll every second.
   */
  before?: number;
}

/** One row of the list: no body, no headers. */
export interface InspectorSummary {
  /** The record's key in the journal (the request id unless the caller chose its own). */
  id: string;
  /** The X-Request-Id the request was answered with. */
  requestId: string;
  at: number;
  hook: string;
  mappingId?: string;
  status: number;
  /** What became of it: a journal state (`done`, `pending`, `refused`, `duplicate`, `interrupted`), or `answered` when it was not journaled. */
  state: string;
  /** The error code of a refusal. */
  code?: string;
  /** The fine reason of a refusal (`TOKEN_WRONG`, `SIGNATURE_MISMATCH`, …), when the journal kept it. */
  reason?: string;
  durationMs?: number;
  /** The journal key of the request this one replays. */
  replayOf?: string;
  /** The client address, when the journal kept it. */
  client?: string;
  /**
   * What became of an accepted request, in a few words: its system events' outcomes (`queued`, `coalesced`,
   * `duplicate`), its agent turns' (`turn ok · text`), its deliveries' (`delivery sent`). Absent until it is known.
   */
  outcome?: string;
}

/** One request, redacted: credential headers "[redacted]", credential query params removed. */
export interface InspectorDetail extends InspectorSummary {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  body?: { kind: "json" | "form" | "text" | "base64"; value: unknown };
  /** "token accepted", "signature accepted (github)", or a refusal's reason code. */
  verification?: string;
  /** A refusal's reason in one line: what the sender likely did wrong, what to check. */
  explanation?: string;
  /** Refusals from the same client address the journal left out before this one (its per-minute limit). */
  suppressed?: number;
  /** The hook is reached by a signature (a copied curl line needs one made afresh). */
  signed?: boolean;
  /** The planned events with their ids and, when the journal kept them, their outcomes. */
  /** Planned events: name, id, the agent it was for (when it named one) and what became of it. */
  events?: { event: string; id: string; agentId?: string; outcome?: string }[];
  /** Agent turns: status, the reply's kind (`text`, `silent`, `empty`) and the delivery's result (`sent`, `failed: …`). */
  runs?: { runId: string; status: string; reply?: string; delivery?: string }[];
  /** The message the sender got, for refusals. */
  error?: string;
  /** Why there is less to show (the journal is off, the body was not stored, the record is no longer kept). */
  note?: string;
}

/** What a live replay came to. */
export interface InspectorReplay {
  status: number;
  requestId: string;
  /** The delivery id was still remembered: the gateway answered with the first answer and did nothing. */
  duplicate: boolean;
  body: unknown;
}

export interface InspectorSource {
  /** false when the journal is off: the page says how to turn it on. */
  readonly journaling: boolean;
  /** Newest first. */
  list(filter: InspectorFilter): Promise<InspectorSummary[]>;
  detail(id: string): Promise<InspectorDetail | undefined>;
  /** What the stored request would produce now: mapping verdicts, planned events; nothing emitted. Undefined: no such stored request. */
  dryRun(id: string): Promise<unknown>;
  /** Runs the stored request through the live pipeline (same duplicate rules), new request id, replayOf = id. Undefined: no such stored request. */
  replay(id: string): Promise<InspectorReplay | undefined>;
  /** The stored request as a `hooks test` fixture (JSON5 text, credentials removed, re-signable). */
  fixture(id: string): Promise<string | undefined>;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 500;

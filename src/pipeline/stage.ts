/** @module What a stage is: a function from the request's context to the next context, or to the Outcome that ends the request. */
import type { Verifier } from "../verify/verifier.js";
import type { PipelineRequest, PipelineResponse } from "./request.js";
import type { HookRoute, Resolution, ResolutionNotes } from "./resolution.js";
import type { TurnPass } from "./turn-pass.js";

/** A request target (`/hooks/wake?x=1`): its path, its parsed query, and its query as sent. */
export interface RequestTarget {
  pathname: string;
  query: URLSearchParams | undefined;
  rawQuery: string;
}

/** How a body is parsed: JSON (also without a Content-Type), or a form's fields. */
export type BodyKind = "json" | "form";

/** Headers beyond content and request id that a request collected on the way (Deprecation). */
export type ExtraHeaders = Record<string, string>;

/** A request's claim on its delivery id (the dedupe stage's ticket), settled with its answer. */
export interface DeliveryClaimTicket {
  /** The key the delivery id is remembered under. */
  readonly key: string;
  /** Remembers the first answer (a 2xx) so duplicates get it; anything else releases the id for a retry. */
  settle(response: PipelineResponse | undefined): Promise<void>;
}

/** Who a request proved to be: how its credential got in. */
export interface Identity {
  /** `token` (the hook token), `signature` (its sender's signature on the body), `handshake` (a verify token). */
  via: "token" | "signature" | "handshake";
  /** The token came in the deprecated `?token=` query: the answer says so. */
  viaQuery: boolean;
}

/** A request's headers, query and URL without credentials: what mappings, captures and the journal see. */
export interface RequestView {
  headers: Record<string, string>;
  query: Record<string, string>;
  url: string;
}

/**
 * What the stages have learnt of one request. Never changed in place: a stage that learns something returns a new
 * context with it (`{ ...ctx, client }`), so what a refusal knows is exactly what the stages before it returned.
 */
export interface RequestContext {
  readonly request: PipelineRequest;
  readonly requestId: string;
  /** Its key in the journal (a caller's reused X-Request-Id gets a fresh one; see journalKeyFor). */
  readonly journalKey: { id: string; requestId?: string };
  readonly target: RequestTarget;
  /** `performance.now()` when it arrived. */
  readonly started: number;
  /** The hook name below `hooks.path` (route). */
  readonly hook: string;
  /** What guards the hook: the token, or its sender's signature (route). */
  readonly verifier: Verifier;
  /** The client's own address: the socket's, or the forwarded one behind a trusted proxy (admit). */
  readonly address?: string | undefined;
  /** The client address budgets and failures are counted against, /64 for IPv6 (admit). */
  readonly client?: string | undefined;
  /** Its credential, once accepted (authenticate). */
  readonly identity?: Identity | undefined;
  /** Headers the answer carries beyond content and request id (Deprecation for a query token). */
  readonly extra?: ExtraHeaders | undefined;
  /** wake, agent or the mapping that claims the name (claim). */
  readonly route?: HookRoute | undefined;
  /** A direct route's rate limit was counted before the body was read (limit). */
  readonly counted?: boolean | undefined;
  readonly bodyKind?: BodyKind | undefined;
  readonly maxBytes?: number | undefined;
  /** The exact bytes received (read body, or authenticate on a signed path). */
  readonly raw?: Buffer | undefined;
  readonly view?: RequestView | undefined;
  readonly text?: string | undefined;
  /** The parsed body (parse). */
  readonly body?: unknown;
  /** This request's claim on its delivery id, settled with its answer (dedupe). */
  readonly ticket?: DeliveryClaimTicket | undefined;
  /** What resolving learnt even when it failed: the owning mapping and its trace (resolve). */
  readonly notes?: ResolutionNotes | undefined;
  readonly resolution?: Resolution | undefined;
  /** The turn slots its agent turns hold until their hand-off (turn slots). */
  readonly pass?: TurnPass | undefined;
  /** The admitted answer, before the events say what became of them (journal). */
  readonly admitted?: PipelineResponse | undefined;
  /** When the journal admitted it (the clock's milliseconds). */
  readonly admittedAt?: number | undefined;
}

/** Why a request was answered without being admitted: listed in the journal as a refusal or a duplicate. */
export interface Refusal {
  code: string;
  /** Finer than the code (`TOKEN_WRONG`, `NO_MAPPING`). */
  reason: string | undefined;
  /** The message the sender got. */
  error: string | undefined;
  /** A duplicate's delivery key. */
  delivery?: string | undefined;
}

/** What one request came to: the answer the adapter writes once, and what the listing, metrics and replay read. */
export interface Outcome {
  readonly kind: "outcome";
  /** False when the path is not below `hooks.path`: the request was left alone, not answered. */
  readonly claimed: boolean;
  readonly response: PipelineResponse;
  /** The context as the last stage left it. */
  readonly ctx: RequestContext | undefined;
  /** Set when the request was not admitted. */
  readonly refusal?: Refusal | undefined;
  /** What happens once the answer has left (the events of a request that answers before they go). */
  readonly after?: (() => void) | undefined;
  /** `performance.now()` when a caller waiting for its turn was admitted: its request is timed to then. */
  readonly waitedFrom?: number | undefined;
}

/** A stage: the next context, or the Outcome that ends the request. Refusals are thrown as HookError. */
export type Stage = (ctx: RequestContext) => RequestContext | Outcome | Promise<RequestContext | Outcome>;

export function isOutcome(value: RequestContext | Outcome): value is Outcome {
  return (value as Outcome).kind === "outcome";
}

/** The answer that ends a request here. */
export function answer(
  ctx: RequestContext,
  response: PipelineResponse,
  more?: Pick<Outcome, "refusal" | "after" | "waitedFrom">,
): Outcome {
  // One literal with every field: every outcome has one shape.
  return {
    kind: "outcome",
    claimed: true,
    response,
    ctx,
    refusal: more?.refusal,
    after: more?.after,
    waitedFrom: more?.waitedFrom,
  };
}

/** A field an earlier stage sets: its absence is a mistake in the stage list, not a request's fault. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`stage order: ${what} is not known yet`);
  return value;
}

/** A refusal thrown by a stage that had learnt something first (the owning mapping, the slots it holds): both kept. */
export class StageFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly ctx: RequestContext,
  ) {
    super("a stage failed");
  }
}

/** What a refusal thrown by a stage comes to, with the context as far as the stages got. */
export type Refuse = (thrown: unknown, ctx: RequestContext) => Promise<Outcome>;

export async function runStages(
  stages: readonly Stage[],
  start: RequestContext,
  refuse: Refuse,
): Promise<Outcome> {
  let ctx = start;
  try {
    for (const stage of stages) {
      // A stage that answers at once is not awaited: an await of a plain value still costs a turn of the
      // microtask queue, a dozen per request (bench/PROFILE.md, "Per batch").
      let next = stage(ctx);
      if (next instanceof Promise) next = await next;
      if (isOutcome(next)) return next;
      ctx = next;
    }
  } catch (thrown) {
    return thrown instanceof StageFailure ? refuse(thrown.error, thrown.ctx) : refuse(thrown, ctx);
  }
  throw new Error("the stage list ended without an answer");
}

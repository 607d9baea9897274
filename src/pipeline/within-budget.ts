/** @module The two stages that hold a share of the admission budgets while a client keeps them busy: a signed body read before its signature is judged, and a caller waiting for its turn's outcome. */
import type { RunCompletionTracker } from "../actions/run-completion.js";
import type { Admission } from "./admission.js";
import { completionBody } from "./completion-body.js";
import type { PipelineRequest, PipelineResponse } from "./request.js";
import { readLimitedBody } from "./stages/read-body.js";
import type { Resolution } from "./stages/resolve.js";
import { type ExtraHeaders, jsonResponse } from "./stages/respond.js";

/** The answer a request gets, and what happens once it has left (the emit stage). */
export interface Answer {
  response: PipelineResponse;
  after?: () => void;
}

export interface BudgetDeps {
  admission: Admission;
  bodyTimeoutMs: number;
  /** The deadline of a body read before its signature can be checked (shorter: nothing vouches for it yet). */
  unverifiedBodyTimeoutMs: number;
  tracker: RunCompletionTracker;
  /** Whether the caller gets the reply text (`hooks.exposeReplies`). */
  exposeReplies: boolean;
}

/**
 * A signed path's body, verified: room for it is reserved among the unverified bodies before a byte is read (its
 * declared length, or the limit when it declares none), it gets the shorter deadline, and the room is given back
 * once its signature was judged.
 */
export async function readSigned<T>(
  deps: Pick<BudgetDeps, "admission" | "bodyTimeoutMs" | "unverifiedBodyTimeoutMs">,
  client: string,
  request: PipelineRequest,
  maxBytes: number,
  verify: (raw: Buffer) => Promise<T>,
): Promise<{ raw: Buffer; result: T }> {
  const declared = Number(request.headers["content-length"]);
  const bytes = Number.isSafeInteger(declared) && declared >= 0 ? declared : maxBytes;
  const release = deps.admission.reserveUnverified(client, bytes);
  try {
    const raw = await readLimitedBody(request.body, {
      maxBytes,
      timeoutMs: Math.min(deps.unverifiedBodyTimeoutMs, deps.bodyTimeoutMs),
    });
    return { raw, result: await verify(raw) };
  } finally {
    release();
  }
}

/** What a waiting caller's place is counted in, and what it gets. */
export type WaitDeps = Pick<BudgetDeps, "admission" | "tracker" | "exposeReplies">;

export interface Waiter {
  /** The client the place is counted against. */
  client: string;
  /** The admission answer: what the caller gets when it cannot wait. */
  admission: PipelineResponse;
  resolution: Resolution;
  runId: string;
  requestId: string;
  extra: ExtraHeaders | undefined;
  /** Emits the turn; never throws (a failing listener is logged by the caller). */
  emit: () => void;
  /** Called once the turn was emitted and the wait begins. */
  admitted: () => void;
  /** Aborted when the caller's connection closes (a replay has none). */
  hungUp: AbortSignal | undefined;
}

/**
 * Waiting callers hold connections for as long as a turn runs: beyond their bound a caller gets the admission
 * answer at once (the turn emitted after it), and its turn runs all the same. Admission already happened
 * (journaled, delivery id remembered with the admission answer), so a caller that disconnects cancels nothing;
 * it only gives its place back, without waiting for its turn to end.
 */
export async function awaitOutcome(deps: WaitDeps, waiter: Waiter): Promise<Answer> {
  const { hungUp } = waiter;
  if (hungUp?.aborted) return { response: waiter.admission, after: waiter.emit };
  const leave = deps.admission.enterWait(waiter.client);
  if (leave === undefined) return { response: waiter.admission, after: waiter.emit };
  let gone!: () => void;
  const left = new Promise<undefined>((resolve) => {
    gone = () => {
      leave();
      resolve(undefined);
    };
  });
  hungUp?.addEventListener("abort", gone, { once: true });
  try {
    const completion = deps.tracker.completion(waiter.runId);
    waiter.emit();
    waiter.admitted();
    const outcome = await Promise.race([completion, left]);
    // Nobody is there to read it: the admission answer stands for what the request came to.
    if (outcome === undefined) return { response: waiter.admission };
    const body = completionBody(waiter.resolution, outcome, deps.exposeReplies);
    return { response: jsonResponse(200, body, waiter.requestId, waiter.extra) };
  } finally {
    hungUp?.removeEventListener("abort", gone);
    leave();
  }
}

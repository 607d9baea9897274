/** @module A caller that asked to wait for its agent turn (`waitForCompletion`): its place among the waiting callers, the turn emitted, and the outcome it waited for. */
import type { RunCompletionTracker } from "../actions/run-completion.js";
import type { Admission } from "./admission.js";
import { completionBody } from "./completion-body.js";
import type { HangUp } from "./request.js";
import type { Resolution } from "./resolution.js";

/** What the caller gets: the turn's outcome as a body, or nothing (the admission answer stands) and the events to send after it. */
export interface Waited {
  body?: Record<string, unknown>;
  after?: () => void;
}

/** What a waiting caller's place is counted in, and what it gets. */
export interface WaitDeps {
  /** Where a waiting caller's place is counted, per client address and in all. */
  admission: Admission;
  tracker: RunCompletionTracker;
  /** Whether the caller gets the reply text (`hooks.exposeReplies`). */
  exposeReplies: boolean;
}

export interface Waiter {
  /** The client the place is counted against. */
  client: string;
  resolution: Resolution;
  runId: string;
  /** Emits the turn; never throws (a failing listener is logged by the caller). */
  emit: () => void;
  /** Called once the turn was emitted and the wait begins. */
  admitted: () => void;
  /** The caller's connection (a replay has none). */
  hungUp: HangUp | undefined;
}

/**
 * Waiting callers hold connections for as long as a turn runs: beyond their bound a caller gets the admission
 * answer at once (the turn emitted after it), and its turn runs all the same. Admission already happened
 * (journaled, delivery id remembered with the admission answer), so a caller that disconnects cancels nothing;
 * it only gives its place back, without waiting for its turn to end.
 */
export async function awaitOutcome(deps: WaitDeps, waiter: Waiter): Promise<Waited> {
  const { hungUp } = waiter;
  if (hungUp?.happened) return { after: waiter.emit };
  const leave = deps.admission.enterWait(waiter.client);
  if (leave === undefined) return { after: waiter.emit };
  let gone!: () => void;
  const left = new Promise<undefined>((resolve) => {
    gone = () => {
      leave();
      resolve(undefined);
    };
  });
  const unwatch = hungUp?.watch(gone);
  try {
    const completion = deps.tracker.completion(waiter.runId);
    waiter.emit();
    waiter.admitted();
    const outcome = await Promise.race([completion, left]);
    // Nobody is there to read it: the admission answer stands for what the request came to.
    if (outcome === undefined) return {};
    return { body: completionBody(waiter.resolution, outcome, deps.exposeReplies) };
  } finally {
    unwatch?.();
    leave();
  }
}

/** @module Exponential backoff with a cap, and an abortable sleep: shared by hook delivery and IMAP reconnects. */

export interface BackoffPolicy {
  /** First delay in milliseconds. */
  initialMs: number;
  /** Upper bound of any single delay; keeps a long outage from growing the wait without end. */
  maxMs: number;
  /** Growth per attempt; 2 doubles the delay. */
  factor: number;
  /** Fraction of each delay randomised (0–1), so many helpers do not retry in lockstep. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000, factor: 2, jitter: 0.2 };

export interface Backoff {
  /** The delay before the next attempt; each call grows it until `maxMs`. */
  next(): number;
  reset(): void;
  /** How many delays were handed out since the last reset. */
  readonly attempts: number;
}

export function createBackoff(policy: BackoffPolicy, random: () => number = Math.random): Backoff {
  let attempts = 0;
  return {
    next() {
      const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** attempts);
      attempts += 1;
      const spread = base * policy.jitter;
      return Math.max(0, Math.round(Math.min(policy.maxMs, base - spread + random() * 2 * spread)));
    },
    reset() {
      attempts = 0;
    },
    get attempts() {
      return attempts;
    },
  };
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts; tells which happened. */
export function sleep(ms: number, signal?: AbortSignal): Promise<"slept" | "aborted"> {
  if (signal?.aborted) return Promise.resolve("aborted");
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve("aborted");
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve("slept");
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

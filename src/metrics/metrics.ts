/** @module What the plugin counts and times, as one interface the stages call; prom-metrics.ts keeps it in prom-client. */
import type { Registry } from "prom-client";

/** How an agent turn the plugin waited on ended (`interrupted`: a restart cut it off). */
export type TurnOutcome = "ok" | "error" | "timeout" | "interrupted";

/** How one transform call ended. */
export type TransformOutcome = "ok" | "error" | "timeout" | "memory";

/** Why a request's credentials were refused. */
export type AuthFailureReason = "missing" | "invalid" | "throttled";

/** What bounds the label values: only names the config declares become labels. */
export interface MetricLabels {
  /** `match.path` of every configured mapping that has one. */
  hookPaths: Iterable<string>;
  /** Every configured mapping's id (presets included). */
  mappingIds: Iterable<string>;
}

/**
 * What a store call that failed was for: counting a failed authentication, clearing a count, claiming a delivery id,
 * keeping its answer, counting a request against a hook's rate limit.
 */
export type StoreOperation = "count" | "reset" | "claim" | "settle" | "rate";

/** The journal's backlog at one moment, read when the metrics are collected. */
export interface JournalPending {
  /** Admitted records whose effects have not all happened yet. */
  unfinished: number;
  /** Lines queued or written and still waiting on their fsync. */
  unsynced: number;
}

export interface HookMetrics {
  /** One answered request: `hook` is the raw hook name (the implementation bounds it), `mappingId` the owner if any. */
  request(
    hook: string,
    mappingId: string | undefined,
    status: number,
    seconds: number,
    bodyBytes: number,
  ): void;
  /** A request refused for its token (or lack of one), or throttled. */
  authFailure(reason: AuthFailureReason): void;
  /** A signed path's request whose signature did not verify; `reason` is a short fixed word (`mismatch`, `stale`, `missing`). */
  signatureFailure(scheme: string, reason: string): void;
  /** A delivery answered with an earlier request's answer. */
  duplicate(hook: string): void;
  /**
   * A request refused for its hook's rate limit: `mappingId` is the mapping whose limit it was, if any. Optional, so
   * a host's own metrics written before rate limits existed keep working.
   */
  rateLimited?(hook: string, mappingId: string | undefined): void;
  /** A call to the store failed (unreachable, too slow): the request went on without it, or got 503. */
  storeFailure(operation: StoreOperation): void;
  /** One journal fsync and how long it took. */
  journalFsync(seconds: number): void;
  /** A waited-on turn's end. */
  turnFinished(outcome: TurnOutcome): void;
  /** One transform call: its mapping, how it ended, how long it took. */
  transform(mappingId: string, outcome: TransformOutcome, seconds: number): void;
  /** A transform worker was replaced (stopped at a limit, or crashed). */
  workerRestart(reason: "timeout" | "memory" | "crash"): void;
  /** Where a scrape reads the journal's backlog; optional, for metrics kept without gauges. */
  journalBacklog?(read: () => JournalPending): void;
  /** Where a scrape reads how many agent turns the plugin waits on: read, not counted, so a stop cannot skew it. */
  agentTurnsInFlight?(read: () => number): void;
  /** Where a scrape reads the agent turns waiting for a slot, by mapping id (`""`: `/agent`). */
  agentTurnsQueued?(read: () => ReadonlyMap<string, number>): void;
  /**
   * A reload's mappings: their paths and ids become label values too. Those of the config before stay, so a series
   * already scraped goes on (the set grows only with the operator's edits, never with what a sender sends).
   */
  allowLabels?(labels: MetricLabels): void;
  /** The prom-client registry holding these metrics, for a host to expose; absent when they are kept elsewhere. */
  readonly registry?: Registry;
}

/** For hosts and tests that count nothing. */
export const NO_METRICS: HookMetrics = {
  request: () => undefined,
  authFailure: () => undefined,
  signatureFailure: () => undefined,
  duplicate: () => undefined,
  storeFailure: () => undefined,
  journalFsync: () => undefined,
  turnFinished: () => undefined,
  transform: () => undefined,
  workerRestart: () => undefined,
};

/** @module The prom-client metric families PromMetrics keeps: their names, help texts, labels and buckets. */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { JournalPending } from "./metrics.js";

/** Webhook answers take milliseconds; a slow body may take up to the body deadline (30 s by default). */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** From a bare ping to the largest body a mapping may accept (32 MiB). */
const BODY_BUCKETS = [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 33_554_432];
/** An fdatasync on an SSD takes well under a millisecond; on a busy or network disk, up to seconds. */
const FSYNC_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];
/** Transforms are bounded by their timeout (5 s by default). */
const TRANSFORM_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The registries a metric is registered in: only the instance's own, never prom-client's global one. */
type Registers = Registry[];

/** What every answered request is counted and timed by. */
export interface RequestFamilies {
  total: Counter<"hook" | "mapping" | "status">;
  duration: Histogram<"hook">;
  bodyBytes: Histogram<"hook">;
}

/** Requests turned away or answered early on the way in, and the store calls those checks lean on. */
export interface GateFamilies {
  authFailures: Counter<"reason">;
  signatureFailures: Counter<"scheme" | "reason">;
  duplicates: Counter<"hook">;
  rateLimited: Counter<"hook" | "mapping">;
  storeFailures: Counter<"operation">;
}

export interface TransformFamilies {
  seconds: Histogram<"mapping">;
  total: Counter<"mapping" | "outcome">;
  workerRestarts: Counter<"reason">;
}

export function createRequestFamilies(registers: Registers): RequestFamilies {
  return {
    total: new Counter({
      name: "hooks_requests_total",
      help: "Hook requests answered, by hook, owning mapping and HTTP status.",
      labelNames: ["hook", "mapping", "status"],
      registers,
    }),
    duration: new Histogram({
      name: "hooks_request_duration_seconds",
      help: "Time from a hook request's arrival to its answer, by hook.",
      labelNames: ["hook"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    bodyBytes: new Histogram({
      name: "hooks_request_body_bytes",
      help: "Body bytes read per hook request (0 when refused before the body), by hook.",
      labelNames: ["hook"],
      buckets: BODY_BUCKETS,
      registers,
    }),
  };
}

export function createGateFamilies(registers: Registers): GateFamilies {
  return {
    authFailures: new Counter({
      name: "hooks_auth_failures_total",
      help: "Requests refused at authentication: no credential (missing), a wrong one (invalid), or over the failure limit (throttled).",
      labelNames: ["reason"],
      registers,
    }),
    signatureFailures: new Counter({
      name: "hooks_signature_failures_total",
      help: "Signed-path requests whose signature did not verify, by scheme and reason (missing, malformed, stale, mismatch).",
      labelNames: ["scheme", "reason"],
      registers,
    }),
    duplicates: new Counter({
      name: "hooks_duplicates_total",
      help: "Deliveries answered with an earlier request's answer, by hook.",
      labelNames: ["hook"],
      registers,
    }),
    rateLimited: new Counter({
      name: "hooks_rate_limited_total",
      help: "Requests refused with 429 RATE_LIMITED, by hook and the mapping whose rate limit it was (empty for /wake and /agent).",
      labelNames: ["hook", "mapping"],
      registers,
    }),
    storeFailures: new Counter({
      name: "hooks_store_failures_total",
      help: "Store calls that failed (unreachable or too slow), by operation: count and reset (auth failures, which then go uncounted), claim and settle (delivery ids: a claim that fails is a 503), rate (rate limits, which then let the request through).",
      labelNames: ["operation"],
      registers,
    }),
  };
}

/**
 * The journal's fsync histogram, and its backlog gauges read at each scrape through `read` (undefined until the
 * journal told how to read it: the gauges then read 0).
 */
export function createJournalFamilies(
  registers: Registers,
  read: () => JournalPending | undefined,
): Histogram {
  const fsyncSeconds = new Histogram({
    name: "hooks_journal_fsync_seconds",
    help: "Duration of each journal fsync (one per batch of admitted requests).",
    buckets: FSYNC_BUCKETS,
    registers,
  });
  new Gauge({
    name: "hooks_journal_unfinished_records",
    help: "Admitted requests whose effects have not all happened yet.",
    registers,
    collect() {
      this.set(read()?.unfinished ?? 0);
    },
  });
  new Gauge({
    name: "hooks_journal_unsynced_lines",
    help: "Journal lines queued or written and still waiting on their fsync.",
    registers,
    collect() {
      this.set(read()?.unsynced ?? 0);
    },
  });
  return fsyncSeconds;
}

/** How the turn gauges read the plugin's turns at each scrape, and label a queue's mapping. */
export interface TurnReaders {
  inFlight: () => number;
  queued: () => ReadonlyMap<string, number> | undefined;
  mappingLabel: (mappingId: string) => string;
}

/** The gauges of turns in flight and queued, read at each scrape; returns the counter of finished turns. */
export function createTurnFamilies(registers: Registers, readers: TurnReaders): Counter<"outcome"> {
  new Gauge({
    name: "hooks_agent_turns_in_flight",
    help: "Agent turns handed to the gateway whose outcome the plugin still waits for.",
    registers,
    collect() {
      this.set(readers.inFlight());
    },
  });
  const seen = new Set<string>();
  new Gauge({
    name: "hooks_agent_turns_queued",
    help: "Agent turns accepted and waiting for a slot under their mapping's maxConcurrentTurns, by mapping.",
    labelNames: ["mapping"],
    registers,
    collect() {
      // A queue that emptied reads 0 rather than vanishing; a mapping's series appears with its first wait.
      for (const label of seen) this.labels(label).set(0);
      for (const [key, count] of readers.queued() ?? []) {
        const label = readers.mappingLabel(key);
        seen.add(label);
        this.labels(label).inc(count);
      }
    },
  });
  return new Counter({
    name: "hooks_agent_turns_total",
    help: "Agent turns finished, by outcome (ok, error, timeout, interrupted).",
    labelNames: ["outcome"],
    registers,
  });
}

export function createTransformFamilies(registers: Registers): TransformFamilies {
  return {
    seconds: new Histogram({
      name: "hooks_transform_duration_seconds",
      help: "Duration of each transform call, by mapping.",
      labelNames: ["mapping"],
      buckets: TRANSFORM_BUCKETS,
      registers,
    }),
    total: new Counter({
      name: "hooks_transforms_total",
      help: "Transform calls, by mapping and outcome (ok, error, timeout, memory).",
      labelNames: ["mapping", "outcome"],
      registers,
    }),
    workerRestarts: new Counter({
      name: "hooks_transform_worker_restarts_total",
      help: "Transform workers replaced, by reason (timeout, memory, crash).",
      labelNames: ["reason"],
      registers,
    }),
  };
}

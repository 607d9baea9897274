/** @module HookMetrics kept in prom-client: one Registry per plugin instance, label values bounded by the config. */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { SIGNATURE_SCHEMES } from "../verify/signature-scheme.js";
import type {
  AuthFailureReason,
  HookMetrics,
  JournalPending,
  MetricLabels,
  StoreOperation,
  TransformOutcome,
  TurnOutcome,
} from "./metrics.js";

/** What a PromMetrics is built with: the label values the config declares. */

/** The hook label of anything that is not `wake`, `agent` or a configured path: a random 404 must not make a series. */
export const OTHER = "other";

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

const AUTH_REASONS: readonly AuthFailureReason[] = ["missing", "invalid", "throttled"];
const SIGNATURE_REASONS = new Set(["missing", "malformed", "stale", "mismatch"]);
const TURN_OUTCOMES: readonly TurnOutcome[] = ["ok", "error", "timeout", "interrupted"];
const STORE_OPERATIONS: readonly StoreOperation[] = ["count", "reset", "claim", "settle", "rate"];
const TRANSFORM_OUTCOMES = new Set<string>(["ok", "error", "timeout", "memory"]);
const RESTART_REASONS = new Set(["timeout", "memory", "crash"]);
const SCHEMES = new Set<string>(SIGNATURE_SCHEMES);

type CounterChild = ReturnType<Counter["labels"]>;
type HistogramChild = ReturnType<Histogram["labels"]>;

/** The series of one hook label, resolved once: a request then pays two observes and one increment. */
interface HookSeries {
  duration: HistogramChild;
  bodyBytes: HistogramChild;
  duplicates: CounterChild;
  /** `hooks_requests_total` children by `<mapping> <status>`. */
  requests: Map<string, CounterChild>;
}

export class PromMetrics implements HookMetrics {
  readonly registry = new Registry();
  private readonly hookPaths: Set<string>;
  private readonly mappingIds: Set<string>;
  private readonly series = new Map<string, HookSeries>();
  private readonly children = new Map<string, CounterChild>();
  private readonly transformDurations = new Map<string, HistogramChild>();
  private readJournal: (() => JournalPending) | undefined;
  private readTurnsInFlight: (() => number) | undefined;
  private readTurnsQueued: (() => ReadonlyMap<string, number>) | undefined;

  private readonly requestsTotal: Counter<"hook" | "mapping" | "status">;
  private readonly requestDuration: Histogram<"hook">;
  private readonly requestBodyBytes: Histogram<"hook">;
  private readonly authFailures: Counter<"reason">;
  private readonly signatureFailures: Counter<"scheme" | "reason">;
  private readonly duplicates: Counter<"hook">;
  private readonly rateLimitedTotal: Counter<"hook" | "mapping">;
  private readonly storeFailures: Counter<"operation">;
  private readonly fsyncSeconds: Histogram;
  private readonly turnsTotal: Counter<"outcome">;
  private readonly transformSeconds: Histogram<"mapping">;
  private readonly transformsTotal: Counter<"mapping" | "outcome">;
  private readonly workerRestarts: Counter<"reason">;

  constructor(settings: MetricLabels) {
    this.hookPaths = new Set(settings.hookPaths);
    this.mappingIds = new Set(settings.mappingIds);
    // Every metric names this registry: prom-client's global one is shared by the whole process.
    const registers = [this.registry];
    this.requestsTotal = new Counter({
      name: "hooks_requests_total",
      help: "Hook requests answered, by hook, owning mapping and HTTP status.",
      labelNames: ["hook", "mapping", "status"],
      registers,
    });
    this.requestDuration = new Histogram({
      name: "hooks_request_duration_seconds",
      help: "Time from a hook request's arrival to its answer, by hook.",
      labelNames: ["hook"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.requestBodyBytes = new Histogram({
      name: "hooks_request_body_bytes",
      help: "Body bytes read per hook request (0 when refused before the body), by hook.",
      labelNames: ["hook"],
      buckets: BODY_BUCKETS,
      registers,
    });
    this.authFailures = new Counter({
      name: "hooks_auth_failures_total",
      help: "Requests refused at authentication: no credential (missing), a wrong one (invalid), or over the failure limit (throttled).",
      labelNames: ["reason"],
      registers,
    });
    this.signatureFailures = new Counter({
      name: "hooks_signature_failures_total",
      help: "Signed-path requests whose signature did not verify, by scheme and reason (missing, malformed, stale, mismatch).",
      labelNames: ["scheme", "reason"],
      registers,
    });
    this.duplicates = new Counter({
      name: "hooks_duplicates_total",
      help: "Deliveries answered with an earlier request's answer, by hook.",
      labelNames: ["hook"],
      registers,
    });
    this.rateLimitedTotal = new Counter({
      name: "hooks_rate_limited_total",
      help: "Requests refused with 429 RATE_LIMITED, by hook and the mapping whose rate limit it was (empty for /wake and /agent).",
      labelNames: ["hook", "mapping"],
      registers,
    });
    this.storeFailures = new Counter({
      name: "hooks_store_failures_total",
      help: "Store calls that failed (unreachable or too slow), by operation: count and reset (auth failures, which then go uncounted), claim and settle (delivery ids: a claim that fails is a 503), rate (rate limits, which then let the request through).",
      labelNames: ["operation"],
      registers,
    });
    this.fsyncSeconds = new Histogram({
      name: "hooks_journal_fsync_seconds",
      help: "Duration of each journal fsync (one per batch of admitted requests).",
      buckets: FSYNC_BUCKETS,
      registers,
    });
    const journal = () => this.readJournal?.();
    new Gauge({
      name: "hooks_journal_unfinished_records",
      help: "Admitted requests whose effects have not all happened yet.",
      registers,
      collect() {
        this.set(journal()?.unfinished ?? 0);
      },
    });
    new Gauge({
      name: "hooks_journal_unsynced_lines",
      help: "Journal lines queued or written and still waiting on their fsync.",
      registers,
      collect() {
        this.set(journal()?.unsynced ?? 0);
      },
    });
    const inFlight = () => this.readTurnsInFlight?.() ?? 0;
    new Gauge({
      name: "hooks_agent_turns_in_flight",
      help: "Agent turns handed to the gateway whose outcome the plugin still waits for.",
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    const queued = () => this.readTurnsQueued?.();
    const mappingLabel = (id: string) => this.mappingLabel(id);
    const seen = new Set<string>();
    new Gauge({
      name: "hooks_agent_turns_queued",
      help: "Agent turns accepted and waiting for a slot under their mapping's maxConcurrentTurns, by mapping.",
      labelNames: ["mapping"],
      registers,
      collect() {
        // A queue that emptied reads 0 rather than vanishing; a mapping's series appears with its first wait.
        for (const label of seen) this.labels(label).set(0);
        for (const [key, count] of queued() ?? []) {
          const label = mappingLabel(key);
          seen.add(label);
          this.labels(label).inc(count);
        }
      },
    });
    this.turnsTotal = new Counter({
      name: "hooks_agent_turns_total",
      help: "Agent turns finished, by outcome (ok, error, timeout, interrupted).",
      labelNames: ["outcome"],
      registers,
    });
    this.transformSeconds = new Histogram({
      name: "hooks_transform_duration_seconds",
      help: "Duration of each transform call, by mapping.",
      labelNames: ["mapping"],
      buckets: TRANSFORM_BUCKETS,
      registers,
    });
    this.transformsTotal = new Counter({
      name: "hooks_transforms_total",
      help: "Transform calls, by mapping and outcome (ok, error, timeout, memory).",
      labelNames: ["mapping", "outcome"],
      registers,
    });
    this.workerRestarts = new Counter({
      name: "hooks_transform_worker_restarts_total",
      help: "Transform workers replaced, by reason (timeout, memory, crash).",
      labelNames: ["reason"],
      registers,
    });
    // Fixed sets start at zero, so a rate() has a series before the first failure.
    for (const reason of AUTH_REASONS) this.authFailures.labels(reason).inc(0);
    for (const outcome of TURN_OUTCOMES) this.turnsTotal.labels(outcome).inc(0);
    for (const operation of STORE_OPERATIONS) this.storeFailures.labels(operation).inc(0);
  }

  request(
    hook: string,
    mappingId: string | undefined,
    status: number,
    seconds: number,
    bodyBytes: number,
  ): void {
    const label = this.hookLabel(hook);
    const series = this.seriesOf(label);
    const mapping = this.mappingLabel(mappingId);
    const key = `${mapping} ${status}`;
    let counter = series.requests.get(key);
    if (counter === undefined) {
      counter = this.requestsTotal.labels(label, mapping, String(status));
      series.requests.set(key, counter);
    }
    counter.inc();
    series.duration.observe(seconds);
    series.bodyBytes.observe(bodyBytes);
  }

  authFailure(reason: AuthFailureReason): void {
    const label = AUTH_REASONS.includes(reason) ? reason : OTHER;
    this.child(this.authFailures, `auth ${label}`, label).inc();
  }

  signatureFailure(scheme: string, reason: string): void {
    const schemeLabel = SCHEMES.has(scheme) ? scheme : OTHER;
    const reasonLabel = SIGNATURE_REASONS.has(reason) ? reason : OTHER;
    this.child(this.signatureFailures, `sig ${schemeLabel} ${reasonLabel}`, schemeLabel, reasonLabel).inc();
  }

  duplicate(hook: string): void {
    this.seriesOf(this.hookLabel(hook)).duplicates.inc();
  }

  rateLimited(hook: string, mappingId: string | undefined): void {
    const label = this.hookLabel(hook);
    const mapping = this.mappingLabel(mappingId);
    this.child(this.rateLimitedTotal, `rate ${label} ${mapping}`, label, mapping).inc();
  }

  storeFailure(operation: StoreOperation): void {
    const label = STORE_OPERATIONS.includes(operation) ? operation : OTHER;
    this.child(this.storeFailures, `store ${label}`, label).inc();
  }

  journalFsync(seconds: number): void {
    this.fsyncSeconds.observe(seconds);
  }

  journalBacklog(read: () => JournalPending): void {
    this.readJournal = read;
  }

  agentTurnsInFlight(read: () => number): void {
    this.readTurnsInFlight = read;
  }

  agentTurnsQueued(read: () => ReadonlyMap<string, number>): void {
    this.readTurnsQueued = read;
  }

  turnFinished(outcome: TurnOutcome): void {
    const label = TURN_OUTCOMES.includes(outcome) ? outcome : OTHER;
    this.child(this.turnsTotal, `turn ${label}`, label).inc();
  }

  transform(mappingId: string, outcome: TransformOutcome, seconds: number): void {
    const mapping = this.mappingLabel(mappingId);
    const outcomeLabel = TRANSFORM_OUTCOMES.has(outcome) ? outcome : OTHER;
    this.child(this.transformsTotal, `transform ${mapping} ${outcomeLabel}`, mapping, outcomeLabel).inc();
    let duration = this.transformDurations.get(mapping);
    if (duration === undefined) {
      duration = this.transformSeconds.labels(mapping);
      this.transformDurations.set(mapping, duration);
    }
    duration.observe(seconds);
  }

  workerRestart(reason: "timeout" | "memory" | "crash"): void {
    const label = RESTART_REASONS.has(reason) ? reason : OTHER;
    this.child(this.workerRestarts, `restart ${label}`, label).inc();
  }

  allowLabels(labels: MetricLabels): void {
    for (const path of labels.hookPaths) this.hookPaths.add(path);
    for (const id of labels.mappingIds) this.mappingIds.add(id);
  }

  /** `wake`, `agent`, a configured mapping's path, else `other`: the label never carries what a sender chose. */
  hookLabel(hook: string): string {
    return hook === "wake" || hook === "agent" || this.hookPaths.has(hook) ? hook : OTHER;
  }

  /** A configured mapping's id, else empty. */
  mappingLabel(mappingId: string | undefined): string {
    return mappingId !== undefined && this.mappingIds.has(mappingId) ? mappingId : "";
  }

  private seriesOf(label: string): HookSeries {
    let series = this.series.get(label);
    if (series === undefined) {
      series = {
        duration: this.requestDuration.labels(label),
        bodyBytes: this.requestBodyBytes.labels(label),
        duplicates: this.duplicates.labels(label),
        requests: new Map(),
      };
      this.series.set(label, series);
    }
    return series;
  }

  /** A counter's child for bounded label values, resolved once. */
  private child<T extends string>(counter: Counter<T>, key: string, ...values: string[]): CounterChild {
    let child = this.children.get(key);
    if (child === undefined) {
      child = counter.labels(...values);
      this.children.set(key, child);
    }
    return child;
  }
}

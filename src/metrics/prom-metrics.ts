/** @module HookMetrics kept in prom-client: one Registry per plugin instance, label values bounded by the config. */
import { type Counter, type Histogram, Registry } from "prom-client";
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
import {
  createGateFamilies,
  createJournalFamilies,
  createRequestFamilies,
  createTransformFamilies,
  createTurnFamilies,
  type GateFamilies,
  type RequestFamilies,
  type TransformFamilies,
} from "./prom-families.js";

/** The hook label of anything that is not `wake`, `agent` or a configured path: a random 404 must not make a series. */
export const OTHER = "other";

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

  private readonly requests: RequestFamilies;
  private readonly gate: GateFamilies;
  private readonly fsyncSeconds: Histogram;
  private readonly turnsTotal: Counter<"outcome">;
  private readonly transforms: TransformFamilies;

  /** Built with the label values the config declares. */
  constructor(settings: MetricLabels) {
    this.hookPaths = new Set(settings.hookPaths);
    this.mappingIds = new Set(settings.mappingIds);
    // Every metric names this registry: prom-client's global one is shared by the whole process.
    const registers = [this.registry];
    this.requests = createRequestFamilies(registers);
    this.gate = createGateFamilies(registers);
    this.fsyncSeconds = createJournalFamilies(registers, () => this.readJournal?.());
    this.turnsTotal = createTurnFamilies(registers, {
      inFlight: () => this.readTurnsInFlight?.() ?? 0,
      queued: () => this.readTurnsQueued?.(),
      mappingLabel: (id) => this.mappingLabel(id),
    });
    this.transforms = createTransformFamilies(registers);
    // Fixed sets start at zero, so a rate() has a series before the first failure.
    for (const reason of AUTH_REASONS) this.gate.authFailures.labels(reason).inc(0);
    for (const outcome of TURN_OUTCOMES) this.turnsTotal.labels(outcome).inc(0);
    for (const operation of STORE_OPERATIONS) this.gate.storeFailures.labels(operation).inc(0);
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
      counter = this.requests.total.labels(label, mapping, String(status));
      series.requests.set(key, counter);
    }
    counter.inc();
    series.duration.observe(seconds);
    series.bodyBytes.observe(bodyBytes);
  }

  authFailure(reason: AuthFailureReason): void {
    const label = AUTH_REASONS.includes(reason) ? reason : OTHER;
    this.child(this.gate.authFailures, `auth ${label}`, label).inc();
  }

  signatureFailure(scheme: string, reason: string): void {
    const schemeLabel = SCHEMES.has(scheme) ? scheme : OTHER;
    const reasonLabel = SIGNATURE_REASONS.has(reason) ? reason : OTHER;
    this.child(
      this.gate.signatureFailures,
      `sig ${schemeLabel} ${reasonLabel}`,
      schemeLabel,
      reasonLabel,
    ).inc();
  }

  duplicate(hook: string): void {
    this.seriesOf(this.hookLabel(hook)).duplicates.inc();
  }

  rateLimited(hook: string, mappingId: string | undefined): void {
    const label = this.hookLabel(hook);
    const mapping = this.mappingLabel(mappingId);
    this.child(this.gate.rateLimited, `rate ${label} ${mapping}`, label, mapping).inc();
  }

  storeFailure(operation: StoreOperation): void {
    const label = STORE_OPERATIONS.includes(operation) ? operation : OTHER;
    this.child(this.gate.storeFailures, `store ${label}`, label).inc();
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
    this.child(this.transforms.total, `transform ${mapping} ${outcomeLabel}`, mapping, outcomeLabel).inc();
    let duration = this.transformDurations.get(mapping);
    if (duration === undefined) {
      duration = this.transforms.seconds.labels(mapping);
      this.transformDurations.set(mapping, duration);
    }
    duration.observe(seconds);
  }

  workerRestart(reason: "timeout" | "memory" | "crash"): void {
    const label = RESTART_REASONS.has(reason) ? reason : OTHER;
    this.child(this.transforms.workerRestarts, `restart ${label}`, label).inc();
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
        duration: this.requests.duration.labels(label),
        bodyBytes: this.requests.bodyBytes.labels(label),
        duplicates: this.gate.duplicates.labels(label),
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

/** @module What `createHooksPlugin(options)` accepts: port implementations to swap in, and a few runtime settings. */
import type { DependencyContainer } from "tsyringe";
import type { Clock, Ids } from "./clock.js";
import type { Journal } from "./journal/journal.js";
import type { TransformRunner, TransformRunnerSettings } from "./mapping/transform-runner.js";
import type { HookMetrics } from "./metrics/metrics.js";
import type { CapturedRequest } from "./pipeline/request.js";
import type { Store } from "./store/store.js";
import type { VerifiersInput } from "./verify/signature-verifier.js";
import type { Verifiers } from "./verify/verifier.js";

export interface HooksPluginOptions {
  /**
   * A tsyringe container where the host registered its own ports under the plugin's tokens (`PORTS`); the plugin
   * resolves from a child of it, and makes a default for every token the host left out.
   */
  container?: DependencyContainer;
  /** Auth-failure counters and duplicate delivery ids (default: in memory). */
  store?: Store;
  /** Where accepted requests are recorded (default: nowhere). */
  journal?: Journal;
  clock?: Clock;
  ids?: Ids;
  /** How transforms run (default: each mapping's `transform.isolate`, a pool of worker threads or the gateway's thread). */
  transformRunner?: (settings: TransformRunnerSettings) => TransformRunner;
  /** How requests prove they may use a hook (default: the hook token, or the sender's signature on signed paths). */
  verifiers?: (input: VerifiersInput) => Verifiers;
  /** What is counted and timed (default: Prometheus metrics in a registry of this instance's own); `false` counts nothing. */
  metrics?: HookMetrics | false;
  /** Receives every authenticated request whose body was read, claimed by a mapping or not, credentials removed (a development aid). */
  capture?: (request: CapturedRequest) => void;
  /** Extra wait past an agent run's timeoutSeconds before the plugin publishes a timeout summary (5000). */
  runDeadlineGraceMs?: number;
  /** How long a host's `admitAgentTurn` may take before the request is answered 503 (15000). */
  turnAdmissionTimeoutMs?: number;
  /** Limit for one transform call (5000). */
  transformTimeoutMs?: number;
  /** How often a loaded transform's file is checked for changes, 0 on every call (250). */
  transformReloadCheckMs?: number;
}

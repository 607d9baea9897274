/** @module The request path as data: the stages every request runs through, in order, built once per config. */
import type { RunCompletionTracker } from "../actions/run-completion.js";
import type { Clock } from "../clock.js";
import type { RateLimit } from "../config/limits-schema.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal } from "../journal/journal.js";
import type { HookMetrics } from "../metrics/metrics.js";
import type { Admission } from "./admission.js";
import type { AdmitAgentTurn } from "./admit-turns.js";
import type { AllowLists } from "./allow-lists.js";
import type { CredentialJudge } from "./credential-judge.js";
import type { HandOff } from "./hand-off.js";
import type { RateLimiter } from "./rate-limit.js";
import type { CapturedRequest } from "./request.js";
import type { Stage } from "./stage.js";
import type { SourceAddressResolver } from "./stages/admit.js";
import { createAdmitStage } from "./stages/admit.js";
import { createAllowFromStage } from "./stages/allow-from.js";
import { createAuthenticateStage } from "./stages/authenticate.js";
import { createCaptureStage, createCaptureUnclaimedStage } from "./stages/capture.js";
import { createClaimStage } from "./stages/claim.js";
import { createContentTypeStage } from "./stages/content-type.js";
import type { DuplicateDeps } from "./stages/dedupe.js";
import { createDedupeStage } from "./stages/dedupe.js";
import { createJournalStage } from "./stages/journal.js";
import { createLimitStage } from "./stages/limit.js";
import { method } from "./stages/method.js";
import { parse } from "./stages/parse.js";
import { createReadBodyStage } from "./stages/read-body.js";
import type { Resolver } from "./stages/resolve.js";
import { createResolveStage } from "./stages/resolve.js";
import { createRespondStage } from "./stages/respond.js";
import { createTurnSlotStage } from "./stages/turn-slots.js";
import { decodeLarge, YIELD_ABOVE_BYTES, yieldLarge } from "./stages/yield-large.js";
import type { TurnGate } from "./turn-gate.js";

/** What the stages of one config run on: its settings and the instance's ports. */
export interface StageDeps {
  bodyTimeoutMs: number;
  /** The deadline of a body read before its signature can be checked (shorter: nothing vouches for it yet). */
  unverifiedBodyTimeoutMs: number;
  /** What unverified bodies and waiting callers may hold, per client address and in all. */
  admission: Admission;
  /** The client's own address (behind trusted proxies, the forwarded one). */
  sourceAddress: SourceAddressResolver;
  /** Which source addresses each hook accepts (`allowFrom`); undefined: no hook limits them. */
  allowFor: AllowLists | undefined;
  /** Turns a verifier's verdict into an identity or a refusal, counting failures per client address. */
  judge: CredentialJudge;
  /** Counts authenticated requests against their hook's rate limit; past it, 429. */
  rateLimiter: RateLimiter;
  /** The rate limits of `/wake` and `/agent` (their own, else `hooks.limits.default`'s); a mapping carries its own. */
  directRateLimits: Readonly<Record<"wake" | "agent", RateLimit | undefined>>;
  resolver: Resolver;
  /** Where delivery ids are claimed, and how long an accepted one is remembered. */
  duplicates: DuplicateDeps;
  /** Headers no mapping, capture or record sees: the credential list plus this config's own signature headers. */
  credentialHeaders: ReadonlySet<string>;
  /** The host's admission of agent turns, asked before the journal; absent: admitted. */
  admitAgentTurn?: AdmitAgentTurn | undefined;
  turnAdmissionTimeoutMs: number;
  /** Where agent turns past their mapping's `maxConcurrentTurns` wait (shared by every config of the instance). */
  gate: TurnGate;
  journal: Journal;
  /** Whether a journal record keeps the request's body and headers (`hooks.journal.storePayloads`). */
  storePayloads: boolean;
  /** The largest body any path of this config takes (`hooks.maxBodyBytes`, a mapping's own). */
  largestBodyBytes: number;
  /** The one door an admitted request's events leave by. */
  handOff: HandOff;
  clock: Clock;
  tracker: RunCompletionTracker;
  metrics: HookMetrics;
  /** Whether a caller waiting for an agent turn's completion gets the reply text (`hooks.exposeReplies`). */
  exposeReplies: boolean;
  logger: HostLogger;
  /** Receives every authenticated request whose body was read (`hooks serve --capture`), claimed or not. */
  capture?: ((request: CapturedRequest) => void) | undefined;
}

/**
 * The order of checks, cheap refusals first, so that no body is read for a request that cannot succeed. A capability
 * is an entry here, not a flag read in several stages; one a config does not use (an allow-list, a rate limit of
 * `/wake` or `/agent`, the capture, pauses for bodies over 1 MiB) is left out of its list, and costs its requests nothing.
 */
export function pipelineStages(deps: StageDeps): readonly Stage[] {
  const capture = deps.capture && { ...deps, capture: deps.capture };
  const { allowFor } = deps;
  const limited = deps.directRateLimits.wake !== undefined || deps.directRateLimits.agent !== undefined;
  // A config whose bodies can pass 1 MiB gives a large one turns of its own; the default limit never needs them.
  const large = deps.largestBodyBytes > YIELD_ABOVE_BYTES;
  const pause = large ? [yieldLarge] : [];
  return [
    method,
    createAdmitStage(deps.sourceAddress),
    ...(allowFor ? [createAllowFromStage(allowFor)] : []),
    createAuthenticateStage(deps),
    ...(capture ? [createCaptureUnclaimedStage(capture)] : []),
    createClaimStage(deps.resolver),
    ...(limited ? [createLimitStage(deps, true)] : []),
    createContentTypeStage(deps.resolver),
    createReadBodyStage(deps.bodyTimeoutMs),
    ...(capture ? [createCaptureStage(capture)] : []),
    ...(large ? [yieldLarge, decodeLarge, yieldLarge] : []),
    parse,
    ...pause,
    createDedupeStage(deps.duplicates, deps.metrics),
    ...(limited ? [createLimitStage(deps, false)] : []),
    createResolveStage(deps),
    ...pause,
    createTurnSlotStage(deps),
    createJournalStage(deps),
    createRespondStage(deps),
  ];
}

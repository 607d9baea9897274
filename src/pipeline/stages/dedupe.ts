/** @module The duplicates stage: a delivery already accepted on the same hook gets its first answer again, and causes nothing new. */

import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { errorMessage, HookError } from "../../errors.js";
import type { HostLogger } from "../../host/contract.js";
import type { RememberedDelivery } from "../../journal/journal.js";
import { type HookMetrics, NO_METRICS } from "../../metrics/metrics.js";
import type { DeliveryClaim, Store, StoredResponse } from "../../store/store.js";
import type { Verifier } from "../../verify/verifier.js";
import type { PipelineResponse } from "../request.js";
import { answer, type RequestContext, type Stage } from "../stage.js";
import { replayedResponse } from "./respond.js";

export function createDedupeStage(duplicates: DuplicateDeps, metrics: HookMetrics): Stage {
  const judged = async (ctx: RequestContext, deliveryId: string) => {
    const verdict = await checkDuplicate(duplicates, ctx.hook, deliveryId);
    if (verdict.kind === "first") return { ...ctx, ticket: verdict.ticket };
    metrics.duplicate(ctx.hook);
    return answer(ctx, replayedResponse(verdict.response, ctx.requestId), {
      refusal: { code: "DUPLICATE", reason: undefined, error: undefined, delivery: verdict.key },
    });
  };
  return function dedupe(ctx) {
    const { verifier, request } = ctx;
    // Known by its signed material only when its signature let it in; with the token, by the id it was sent with.
    const signed = ctx.identity?.via === "signature" ? ctx.raw : undefined;
    const deliveryId = deliveryIdOf(verifier, request.headers, ctx.body, signed);
    // Without a delivery id there is nothing to look up: answered at once, without a promise.
    return deliveryId === undefined ? ctx : judged(ctx, deliveryId);
  };
}

/** 1–256 printable ASCII characters, as the Idempotency-Key header is commonly specified. */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,256}$/;
/** How long an unanswered claim blocks its id: longer than any request takes, short enough if a gateway dies. */
const HOLD_MS = 60_000;
/** How long a duplicate waits for the first request's answer before it is told to retry. */
const WAIT_MS = 10_000;
const RETRY_AFTER_SECONDS = 5;
/** A failed settle is tried again after these pauses (doubling), until the claim's hold has passed. */
const SETTLE_RETRY_MS = { first: 250, max: 5_000 };
/** Ids longer than this (a sender's own may be any length) are remembered by their digest. */
const MAX_KEPT_ID = 256;

/**
 * The delivery's id: the sender's own, or its signed body's digest (per signature scheme), or the caller's
 * `Idempotency-Key`; undefined when the request carries none. A malformed key is a 400, not a silently unprotected
 * request.
 */
export function deliveryIdOf(
  verifier: Verifier,
  headers: IncomingHttpHeaders,
  body: unknown,
  /** The bytes its signature was verified on; undefined when no signature let it in. */
  rawBody: Buffer | undefined,
): string | undefined {
  const fromSender = verifier.deliveryId?.(headers, body, rawBody);
  if (fromSender !== undefined && fromSender !== "") return fromSender;
  const given = headers["idempotency-key"];
  if (given === undefined) return undefined;
  const key = (Array.isArray(given) ? given[0]! : given).trim();
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new HookError(
      "INVALID_PAYLOAD",
      "The Idempotency-Key header must be 1 to 256 printable ASCII characters.",
    );
  }
  return key;
}

/**
 * Whether a request may have a delivery id, judged on its headers alone: it has an `Idempotency-Key`, or its verifier
 * knows deliveries by an id of the sender's (which may be in the body). False: no duplicate check can answer it.
 */
export function mayCarryDeliveryId(verifier: Verifier, headers: IncomingHttpHeaders): boolean {
  return verifier.deliveryId !== undefined || headers["idempotency-key"] !== undefined;
}

/** One claimed delivery: settled with the answer once it is known, or released when the request failed. */
export class DeliveryTicket {
  private settled = false;
  /** When the id was claimed: its hold, and so the retries of a failed settle, end HOLD_MS after it. */
  private readonly claimedAt = Date.now();
  private lastError = "";

  constructor(
    private readonly store: Store,
    /** The key the delivery id is remembered under (the journal keeps it, so a restart remembers it too). */
    readonly key: string,
    private readonly claim: string,
    private readonly keepMs: number,
    private readonly logger: HostLogger,
    private readonly metrics: HookMetrics,
  ) {}

  /** Remembers the first answer (a 2xx) so duplicates get it; anything else releases the id for a retry. */
  async settle(response: PipelineResponse | undefined): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const accepted = response !== undefined && response.status >= 200 && response.status < 300;
    const stored: StoredResponse | undefined = accepted
      ? { status: response.status, contentType: response.headers["Content-Type"], body: response.body }
      : undefined;
    if (await this.tryToSettle(stored)) return;
    this.logger.error(
      `recording a delivery's answer failed: ${this.lastError}; retrying in the background until its claim lapses`,
    );
    // Not awaited: the sender's answer does not wait for the store. Until the answer is recorded, copies of the
    // delivery are told the first is in progress (409); if it never is, the claim lapses and a copy is accepted.
    void this.retry(stored);
  }

  private async tryToSettle(stored: StoredResponse | undefined): Promise<boolean> {
    try {
      await this.store.settleDelivery(this.key, this.claim, stored, this.keepMs);
      return true;
    } catch (error) {
      this.metrics.storeFailure("settle");
      this.lastError = errorMessage(error);
      return false;
    }
  }

  private async retry(stored: StoredResponse | undefined): Promise<void> {
    let pause = SETTLE_RETRY_MS.first;
    for (let attempt = 1; ; attempt++) {
      if (Date.now() + pause >= this.claimedAt + HOLD_MS) {
        this.logger.error(`recording a delivery's answer failed for good: ${this.lastError}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pause).unref());
      if (await this.tryToSettle(stored)) {
        this.logger.info("a delivery's answer was recorded after all", { attempts: attempt + 1 });
        return;
      }
      pause = Math.min(pause * 2, SETTLE_RETRY_MS.max);
    }
  }
}

export type DuplicateVerdict =
  | { kind: "first"; ticket: DeliveryTicket }
  /** `key`: what the id is remembered under (the journal limits a duplicate's listings by it). */
  | { kind: "duplicate"; response: StoredResponse; key: string };

export interface DuplicateDeps {
  store: Store;
  /** How long an accepted delivery id is remembered (`hooks.dedupe.windowSeconds`). */
  keepMs: number;
  logger: HostLogger;
  /** Counts the store's failures (default: nothing). */
  metrics?: HookMetrics;
}

/** Claims the id for this hook; a store that cannot answer refuses the request rather than risk accepting it twice. */
export async function checkDuplicate(
  deps: DuplicateDeps,
  hook: string,
  id: string,
): Promise<DuplicateVerdict> {
  // Encoded so that a hook name holding ":" cannot make two different (hook, id) pairs one key; a sender's id
  // of any length is kept as its digest, so a remembered id costs a bounded amount of memory.
  const kept =
    id.length <= MAX_KEPT_ID ? id : `sha256:${createHash("sha256").update(id).digest("base64url")}`;
  const key = `delivery:${encodeURIComponent(hook)}:${kept}`;
  const metrics = deps.metrics ?? NO_METRICS;
  let claim: DeliveryClaim;
  try {
    claim = await deps.store.claimDelivery(key, { holdMs: HOLD_MS, waitMs: WAIT_MS });
  } catch (error) {
    metrics.storeFailure("claim");
    throw new HookError("UNAVAILABLE", "Duplicate deliveries cannot be checked right now; retry later.", {
      headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (claim.state === "answered") return { kind: "duplicate", response: claim.response, key };
  if (claim.state === "in-progress") {
    throw new HookError(
      "DUPLICATE_IN_PROGRESS",
      "A request with this delivery id is still being handled; retry later.",
      { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } },
    );
  }
  return {
    kind: "first",
    ticket: new DeliveryTicket(deps.store, key, claim.claim, deps.keepMs, deps.logger, metrics),
  };
}

/**
 * Remembers the delivery ids a previous run accepted (from its journal), each for what is left of its window,
 * so a sender's retry after a restart still gets the first answer. An id the store already holds is left alone.
 * One call for all of them: a shared store takes them in a few round trips, not two per id.
 */
export async function rememberDeliveries(
  deps: DuplicateDeps,
  deliveries: readonly RememberedDelivery[],
  now: number,
): Promise<number> {
  const answers = deliveries.flatMap(({ key, at, response: { status, contentType, body } }) => {
    const keepMs = at + deps.keepMs - now;
    return keepMs > 0 ? [{ key, keepMs, response: { status, contentType, body } }] : [];
  });
  return answers.length === 0 ? 0 : deps.store.rememberDeliveries(answers);
}

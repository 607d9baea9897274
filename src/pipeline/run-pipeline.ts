import type { RunCompletionTracker } from "../actions/run-completion.js";
import type { Clock } from "../clock.js";
import type { RateLimit } from "../config/limits-schema.js";
import { type HookError, toHookError } from "../errors.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Ids } from "../ids.js";
import type { Journal } from "../journal/journal.js";
import type { HookMetrics } from "../metrics/metrics.js";
import {
  headersWithoutCredentials,
  queryWithoutCredentials,
  urlWithoutCredentials,
} from "../safety/credentials.js";
import type { SecretRedactor } from "../safety/secret-redaction.js";
import type { Verifiers } from "../verify/verifier.js";
import type { Admission } from "./admission.js";
import { type AdmitAgentTurn, admitTurns } from "./admit-turns.js";
import type { Authenticated, Authenticator } from "./authenticate.js";
import type { ClientAddressResolver } from "./client-address.js";
import {
  checkDuplicate,
  type DeliveryTicket,
  type DuplicateDeps,
  deliveryIdOf,
  mayCarryDeliveryId,
} from "./duplicates.js";
import { emitRequestEvent } from "./emit.js";
import { answersWithOutcome, withEventOutcome } from "./event-outcome.js";
import { handOff } from "./hand-off.js";
import { challengeResponse } from "./handshake.js";
import { admit, journalKeyFor, journalResponse } from "./journal-record.js";
import { listAnswered } from "./list-answered.js";
import { classifyContentType, parseBody, refuseRelabelledJson } from "./parse-body.js";
import type { RateLimited, RateLimiter } from "./rate-limit.js";
import { checkDeclaredLength, readLimitedBody } from "./read-body.js";
import type { CapturedRequest, PipelineRequest, Responder } from "./request.js";
import { requestIdFor } from "./request-id.js";
import type { Resolution, ResolutionNotes, Resolver } from "./resolve.js";
import {
  type ExtraHeaders,
  errorResponse,
  fixedResponse,
  jsonResponse,
  noContentResponse,
  replayedResponse,
} from "./respond.js";
import { checkMethod, hookName, notFound, type RequestTarget, splitTarget } from "./route.js";
import type { TurnGate, TurnPass } from "./turn-gate.js";
import { type Answer, awaitOutcome, readSigned } from "./within-budget.js";

export interface PipelineDeps {
  basePath: string;
  bodyTimeoutMs: number;
  /** The deadline of a body read before its signature can be checked (shorter: nothing vouches for it yet). */
  unverifiedBodyTimeoutMs: number;
  /** What unverified bodies and waiting callers may hold, per client address and in all. */
  admission: Admission;
  /** The client address budgets are counted against (the same one failed authentications are). */
  clientAddress: ClientAddressResolver;
  /** Which verifier guards each hook: the token, or a signature on the body's bytes. */
  verifiers: Verifiers;
  authenticate: Authenticator;
  /** Counts authenticated requests against their hook's rate limit; past it, 429. */
  rateLimiter: RateLimiter;
  /** The rate limits of `/wake` and `/agent` (their own, else `hooks.limits.default`'s); a mapping carries its own. */
  directRateLimits: Readonly<Record<"wake" | "agent", RateLimit | undefined>>;
  resolver: Resolver;
  /** Where delivery ids are claimed, and how long an accepted one is remembered. */
  duplicates: DuplicateDeps;
  /** Headers no mapping, capture or log sees: the credential list plus this config's own signature headers. */
  credentialHeaders: ReadonlySet<string>;
  /**
   * Hides this config's token and signing secrets in a listed refusal, wherever the sender put them (built once per
   * config; run only on the refusal path).
   */
  redactSecrets: SecretRedactor;
  /** The host's admission of agent turns (see the host contract), asked before the journal; absent: admitted. */
  admitAgentTurn?: AdmitAgentTurn | undefined;
  /** How long the host may take to admit a request's agent turns. */
  turnAdmissionTimeoutMs: number;
  /** Where agent turns past their mapping's `maxConcurrentTurns` wait (shared by every config of the instance). */
  gate: TurnGate;
  /** Where accepted requests are recorded before their answer, and through whose hand-off their events leave. */
  journal: Journal;
  /** Whether a journal record keeps the request's body and headers (`hooks.journal.storePayloads`). */
  storePayloads: boolean;
  clock: Clock;
  tracker: RunCompletionTracker;
  metrics: HookMetrics;
  /** Whether a caller waiting for an agent turn's completion gets the reply text (`hooks.exposeReplies`). */
  exposeReplies: boolean;
  /** Whether `waitForCompletion` holds the answer until the turn ends (a replay answers at admission). */
  awaitCompletions: boolean;
  bus: HookBus;
  logger: HostLogger;
  ids: Ids;
  /** Receives every authenticated request whose body was read (`hooks serve --capture`), claimed or not. */
  capture?: ((request: CapturedRequest) => void) | undefined;
}

/** What one request came to: its answer, and the resolution replay shows. */
export interface Exchange {
  /** False when the path is not below `hooks.path`: the request was left alone, not answered. */
  claimed: boolean;
  requestId: string;
  hook: string | undefined;
  status: number;
  mappingId: string | undefined;
  resolution: Resolution | undefined;
  /** The parsed body, once it was read (replay explains the mappings' verdicts with it). */
  body?: unknown;
  notes: ResolutionNotes;
}

const NO_VIEW = Object.freeze({ headers: Object.freeze({}), query: Object.freeze({}), url: "" });

export type Pipeline = (request: PipelineRequest, responder: Responder) => Promise<Exchange>;

/**
 * Read top to bottom, this is the order of checks: cheap refusals first, no body read for a request that cannot
 * succeed. A replay runs this same function with its own ports (a journal that records nothing, a bus nobody
 * listens to, a store that remembers nothing), not with flags.
 */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const { journal } = deps;
  const handOffDeps = {
    journal,
    bus: deps.bus,
    tracker: deps.tracker,
    logger: deps.logger,
    gate: deps.gate,
    admitAgentTurn: deps.admitAgentTurn,
    turnAdmissionTimeoutMs: deps.turnAdmissionTimeoutMs,
  };

  /** Everything from the method check to the answer; throws a HookError for a refusal. */
  async function serve(request: PipelineRequest, target: RequestTarget, progress: Progress): Promise<Answer> {
    const { exchange } = progress;
    const hook = exchange.hook!;
    const { requestId } = exchange;
    const { pathname, query, rawQuery } = target;
    const verifier = deps.verifiers.forHook(hook);
    checkMethod(request.method, verifier.handshake !== undefined);
    // Resolved once (behind trusted proxies X-Forwarded-For is parsed): failures, budgets and listed refusals are
    // counted against it.
    const client = deps.clientAddress(request.remoteAddress, request.headers);
    progress.client = client;
    const credentials = { verifier, hook, headers: request.headers, query, rawQuery, client, requestId };
    // Meta's subscription GET: its verify token is its credential, judged and counted as the hook token is; only
    // then is the query read for the challenge. No body, no mapping, no event.
    const { handshake } = verifier;
    if (request.method === "GET" && handshake !== undefined) {
      // A token that travels in URLs gets no way past the limit on failures, and clears none; nor does it make its
      // refusals (an unanswerable challenge) a trusted sender's, listed beyond the budget strangers share.
      await deps.authenticate.refuseThrottled(credentials);
      await deps.authenticate({ ...credentials, verifier: handshake });
      const response = challengeResponse(handshake.challengeOf(query), requestId);
      exchange.status = response.status;
      return { response };
    }
    // A token is judged before any byte of the body is read, on a signed path that takes one too: a correct token
    // gets in whatever failures its address has. A signature can only be judged on those bytes, so there a throttled
    // address is refused first, without a byte read or a hash computed: even a correct signature then gets 429.
    const byToken = verifier.needsBody
      ? await deps.authenticate.acceptToken(credentials)
      : await deps.authenticate(credentials);
    if (byToken) noteAuthenticated(progress, byToken);
    else await deps.authenticate.refuseThrottled(credentials);
    const route = deps.resolver.route(hook);
    if (!route) {
      if (deps.capture) await captureUnclaimed(request, exchange, query);
      throw notFound();
    }
    // Only authenticated requests are counted (a stranger's flood must not use up a sender's budget), and only once
    // they are known not to be duplicates: a retry of an accepted request gets its first answer, not 429, and spends
    // nothing. A mapping is counted once it owns the request; /wake and /agent right after the duplicate check, or,
    // let in by the token with no delivery id to check, at once, before the body is read.
    const count = (rule: RateLimit | undefined, owner: RateLimited["owner"]) =>
      deps.rateLimiter({ rule, owner, hook, client, requestId });
    const direct = route.kind === "mapped" ? undefined : route;
    const limitDirect = async () => {
      if (direct) await count(deps.directRateLimits[direct.kind], direct);
    };
    const countedFirst =
      byToken !== undefined && direct !== undefined && !mayCarryDeliveryId(verifier, request.headers);
    if (countedFirst) await limitDirect();
    const kind = classifyContentType(request.headers["content-type"]);
    const maxBytes = deps.resolver.bodyLimit(route);
    checkDeclaredLength(request.headers, maxBytes);
    let raw: Buffer;
    if (byToken === undefined) {
      raw = await readSigned(deps, client, request, maxBytes, (rawBody) =>
        deps.authenticate({ ...credentials, rawBody }).then((auth) => noteAuthenticated(progress, auth)),
      );
    } else {
      raw = await readLimitedBody(request.body, { maxBytes, timeoutMs: deps.bodyTimeoutMs });
    }
    progress.bodyBytes = raw.length;
    // Mappings and captures see the request without credentials; a direct wake or agent body needs none of it.
    const view =
      route.kind === "mapped" || deps.capture
        ? {
            headers: headersWithoutCredentials(request.headers, deps.credentialHeaders),
            query: queryWithoutCredentials(query),
            url: urlWithoutCredentials(pathname, query),
          }
        : NO_VIEW;
    if (deps.capture) {
      capture(deps, {
        requestId,
        method: request.method,
        hook,
        headers: view.headers,
        query: view.query,
        rawBody: raw,
      });
    }
    const text = raw.toString("utf8");
    // Signed bytes are read as their sender sends them, whatever the unsigned Content-Type says.
    if (verifier.needsBody) refuseRelabelledJson(kind, text);
    const body = parseBody(kind, raw, text);
    exchange.body = body;
    // Slack's check of a Request URL: answered once its signature is, whatever the mappings would make of it.
    const challenge = verifier.bodyChallenge?.(body);
    if (challenge !== undefined) {
      const response = challengeResponse(challenge, requestId);
      exchange.status = response.status;
      return { response };
    }
    // Known by its signed material only when its signature let it in; with the token, by the id it was sent with.
    const deliveryId = deliveryIdOf(verifier, request.headers, body, byToken === undefined ? raw : undefined);
    if (deliveryId !== undefined) {
      const verdict = await checkDuplicate(deps.duplicates, hook, deliveryId);
      if (verdict.kind === "duplicate") {
        exchange.status = verdict.response.status;
        progress.duplicate = verdict.key;
        deps.metrics.duplicate(hook);
        return { response: replayedResponse(verdict.response, requestId) };
      }
      progress.ticket = verdict.ticket;
    }
    if (!countedFirst) await limitDirect();
    const resolution = await deps.resolver.resolve(
      route,
      { hook, ...view, body, rawBody: raw, bodyBytes: raw.length, requestId },
      exchange.notes,
      (mapping) => count(mapping.rateLimit, { kind: "mapping", mappingId: mapping.id }),
    );
    exchange.resolution = resolution;
    // Slots held from here to the hand-off: a turn that will wait is neither admitted now nor started later twice.
    const pass = resolution.plans.some((plan) => plan.run !== undefined)
      ? deps.gate.claim(resolution.plans)
      : undefined;
    progress.pass = pass;
    if (pass?.queued && resolution.body !== undefined) resolution.body.queued = true;
    const response = resolution.reply
      ? fixedResponse(resolution.reply, requestId, progress.extra)
      : resolution.body === undefined
        ? noContentResponse(requestId, progress.extra)
        : jsonResponse(resolution.status, resolution.body, requestId, progress.extra);
    // The host first: a turn it will not run is refused here, with nothing journaled, so the sender's retry is safe.
    // A turn that waits for its slot is admitted when it leaves the queue: admitting it is starting it.
    if (deps.admitAgentTurn !== undefined && pass !== undefined) {
      const startNow = resolution.plans.filter(
        (plan) => plan.run !== undefined && pass.holds(plan.run.runId),
      );
      await admitTurns(deps.admitAgentTurn, startNow, deps.turnAdmissionTimeoutMs);
    }
    const at = deps.clock.now();
    await admit(journal, {
      key: progress.journalKey,
      at,
      hook,
      mappingId: resolution.mappingId,
      response,
      delivery: progress.ticket?.key,
      plans: resolution.plans,
      request: deps.storePayloads
        ? {
            method: request.method,
            url: view === NO_VIEW ? urlWithoutCredentials(pathname, query) : view.url,
            view: view === NO_VIEW ? undefined : view.headers,
            headers: request.headers,
            credentialHeaders: deps.credentialHeaders,
            raw,
            text,
          }
        : undefined,
      replayOf: request.replayOf,
    });
    exchange.status = resolution.status;
    const run = resolution.awaitRun;
    if (run === undefined && answersWithOutcome(resolution.plans, resolution.reply !== undefined)) {
      // The events go before the answer, which says what became of them; remembered before it leaves, so a
      // duplicate arriving meanwhile gets this answer, not a second run.
      let answer = response;
      try {
        const told = handOff(handOffDeps, progress.journalKey.id, resolution.plans, pass);
        answer = withEventOutcome(answer, resolution, told, requestId, progress.extra);
      } catch (error) {
        // A failing listener leaves the admitted answer; the record stays unfinished for the next start.
        logFailure(deps.logger, toHookError(error), exchange, "emitting the events failed");
      }
      const { ticket } = progress;
      if (ticket !== undefined) {
        try {
          await ticket.settle(answer);
        } catch (error) {
          // The events are out already: the sender gets its answer. Refusing it now would free the delivery id and
          // make the sender's retry a second wake; the journal's record still holds the id for the next start.
          logFailure(
            deps.logger,
            toHookError(error),
            exchange,
            "remembering the answer for duplicates failed",
          );
        }
        // The journal admitted the answer without it: a duplicate after a restart gets this one too.
        if (answer !== response)
          journal.responded?.(progress.journalKey.id, answer.status, {
            key: ticket.key,
            response: journalResponse(answer),
            at,
          });
      }
      return { response: answer };
    }
    // Remembered before it leaves, so a duplicate arriving meanwhile gets this answer, not a second run.
    await progress.ticket?.settle(response);
    const emit = () => {
      handOff(handOffDeps, progress.journalKey.id, resolution.plans, pass);
    };
    if (run === undefined || !deps.awaitCompletions) return { response, after: emit };
    const answer = await awaitOutcome(deps, {
      client,
      admission: response,
      resolution,
      runId: run.runId,
      requestId,
      extra: progress.extra,
      emit: () => {
        // A failing listener still leaves the caller an answer.
        try {
          emit();
        } catch (error) {
          logFailure(deps.logger, toHookError(error), exchange, "emitting the events failed");
        }
      },
      admitted: () => {
        progress.admittedAt = performance.now();
      },
      hungUp: request.hungUp,
    });
    exchange.status = answer.response.status;
    // The journal admitted the 202; the caller that waited got the turn's outcome, and the listing shows that.
    if (answer.response.status !== response.status)
      journal.responded?.(progress.journalKey.id, exchange.status);
    return answer;
  }

  /** `hooks serve --capture` also records authenticated requests no mapping claims yet: a new sender's first payload. */
  async function captureUnclaimed(
    request: PipelineRequest,
    exchange: Exchange,
    query: URLSearchParams | undefined,
  ): Promise<void> {
    let raw: Buffer;
    try {
      const maxBytes = deps.resolver.bodyLimit({ kind: "wake" });
      checkDeclaredLength(request.headers, maxBytes);
      raw = await readLimitedBody(request.body, { maxBytes, timeoutMs: deps.bodyTimeoutMs });
    } catch {
      return; // Not capturable; the sender still gets its 404.
    }
    capture(deps, {
      requestId: exchange.requestId,
      method: request.method,
      hook: exchange.hook!,
      headers: headersWithoutCredentials(request.headers, deps.credentialHeaders),
      query: queryWithoutCredentials(query),
      rawBody: raw,
    });
  }

  /** A refusal's answer: the delivery id is free again for the sender's retry. */
  async function refuse(thrown: unknown, progress: Progress): Promise<Answer> {
    const error = toHookError(thrown);
    const { exchange } = progress;
    exchange.status = error.status;
    logFailure(deps.logger, error, exchange, "hook request failed");
    await progress.ticket?.settle(undefined);
    // Not accepted: the slots its turns held are free again.
    progress.pass?.cancel();
    progress.code = error.code;
    progress.reason = error.reason ?? (error.code === "NOT_FOUND" ? "NO_MAPPING" : error.code);
    progress.error = error.message;
    return { response: errorResponse(error, exchange.requestId, progress.extra) };
  }

  return async function runPipeline(request, responder) {
    const started = performance.now();
    const requestId = requestIdFor(request.headers["x-request-id"], deps.ids);
    const exchange: Exchange = {
      claimed: true,
      requestId,
      hook: undefined,
      status: 0,
      mappingId: undefined,
      resolution: undefined,
      notes: {},
    };
    const target = splitTarget(request.url);
    const hook = hookName(target.pathname, deps.basePath);
    if (hook === undefined) {
      exchange.claimed = false;
      return exchange;
    }
    exchange.hook = hook;
    const progress: Progress = {
      exchange,
      extra: undefined,
      ticket: undefined,
      duplicate: undefined,
      authenticated: false,
      bodyBytes: 0,
      admittedAt: undefined,
      journalKey: journalKeyFor(request.headers, requestId, deps.ids),
    };
    const answer = await serve(request, target, progress).catch((thrown) => refuse(thrown, progress));
    // The one place the answer is written.
    await responder.respond(answer.response);
    try {
      answer.after?.();
    } catch (error) {
      // The answer left; only emitting failed (a throwing listener). The request stays answered.
      logFailure(deps.logger, toHookError(error), exchange, "emitting the events failed");
    }
    // The owning mapping, learnt by the resolve stage whether it succeeded or not.
    exchange.mappingId = exchange.notes.mappingId;
    // Every answer without admission is listed; a stranger's (nothing accepted yet) within the per-client and
    // all-clients limits, a duplicate or a repeated refusal (a 429 of a rate limit) within its series', so that a
    // flood of them cannot fill the disk.
    if (progress.duplicate !== undefined || progress.code !== undefined) {
      listAnswered(journal, {
        key: progress.journalKey,
        at: deps.clock.now(),
        hook,
        mappingId: exchange.mappingId,
        status: exchange.status,
        code: progress.duplicate !== undefined ? "DUPLICATE" : progress.code,
        reason: progress.reason,
        error: progress.error,
        // A refusal before the address was resolved (the method) resolves it now, the same way.
        client: progress.client ?? deps.clientAddress(request.remoteAddress, request.headers),
        method: request.method,
        url: urlWithoutCredentials(target.pathname, target.query),
        headers: request.headers,
        credentialHeaders: deps.credentialHeaders,
        redact: deps.redactSecrets,
        perClient: !progress.authenticated,
        delivery: progress.duplicate,
      });
    }
    const ended = performance.now();
    const durationMs = Math.round((ended - started) * 1000) / 1000;
    const { mappingId, status } = exchange;
    // A request that waited for its turn is timed to its admission: the turn's own length (up to a day) is the
    // agent's time, not the intake's, and would push every such request past the histogram's buckets.
    const admitted = ((progress.admittedAt ?? ended) - started) / 1000;
    deps.metrics.request(hook, mappingId, status, admitted, progress.bodyBytes);
    emitRequestEvent(
      { method: request.method, hook, requestId, mappingId, status, durationMs },
      deps.bus,
      deps.logger,
    );
    return exchange;
  };
}

/** What the stages learn on the way that the answer and the listing need, whether it is a success or a refusal. */
interface Progress {
  /** What the caller gets back. */
  exchange: Exchange;
  /** Headers beyond content and request id (Deprecation for a query token). */
  extra: ExtraHeaders | undefined;
  /** This request's claim on its delivery id, settled with its answer. */
  ticket: DeliveryTicket | undefined;
  /** Answered with an earlier request's answer, as a duplicate delivery: the key its delivery id is kept under. */
  duplicate: string | undefined;
  /** The error code of a refusal. */
  code?: string;
  /** A refusal's reason, finer than its code, and the message the sender got. */
  reason?: string;
  error?: string;
  /** The client address, once resolved. */
  client?: string;
  /** The request's credentials were accepted. */
  authenticated: boolean;
  /** Bytes of body read (0 when refused before reading). */
  bodyBytes: number;
  /** When a request that waits for its turn's outcome was admitted (performance.now()). */
  admittedAt: number | undefined;
  /** Its key in the journal (see journalKeyFor). */
  journalKey: { id: string; requestId?: string };
  /** The slots its agent turns hold until their hand-off. */
  pass?: TurnPass | undefined;
}

function noteAuthenticated(progress: Progress, auth: Authenticated): void {
  progress.authenticated = true;
  if (auth.viaQuery) progress.extra = { Deprecation: "true" };
}

/** Hands the request to the capture hook; a failing hook never fails the request. */
function capture(deps: PipelineDeps, request: CapturedRequest): void {
  try {
    deps.capture!(request);
  } catch (error) {
    deps.logger.warn(`request capture failed: ${(error as Error).message}`, { requestId: request.requestId });
  }
}

/** 5xx are logged here with their cause; mapping failures were logged by the engine, with the module. */
function logFailure(logger: HostLogger, error: HookError, exchange: Exchange, what: string): void {
  if (error.status < 500 || error.code === "MAPPING_FAILED") return;
  const cause =
    error.cause instanceof Error
      ? error.cause.message
      : error.cause === undefined
        ? undefined
        : String(error.cause);
  logger.error(`${what}: ${error.code}${cause ? `: ${cause}` : ""}`, {
    requestId: exchange.requestId,
    hook: exchange.hook,
    mappingId: exchange.notes.mappingId,
  });
}

/** @module What the stage tests share: a request's context as the route leaves it, a prepared config's resolver and verifiers, and quiet ports. */

import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { expect } from "vitest";
import type { Clock, Ids } from "../../../src/clock.js";
import { actionPolicyOf } from "../../../src/compose.js";
import { type HookError, isHookError } from "../../../src/errors.js";
import type { HostLogger } from "../../../src/host/contract.js";
import { MappingEngine } from "../../../src/mapping/mapping-engine.js";
import { MappingIndex } from "../../../src/mapping/mapping-index.js";
import type { TransformRunner } from "../../../src/mapping/transform-runner.js";
import type { PipelineRequest } from "../../../src/pipeline/request.js";
import { hookName, splitTarget } from "../../../src/pipeline/run-pipeline.js";
import { isOutcome, type Outcome, type RequestContext, type Stage } from "../../../src/pipeline/stage.js";
import { Resolver } from "../../../src/pipeline/stages/resolve.js";
import { type PreparedHooks, prepareHooks } from "../../../src/prepare-hooks.js";
import { createVerifiers } from "../../../src/verify/signature-verifier.js";
import { createTokenVerifier } from "../../../src/verify/token.js";
import type { Verifier, Verifiers } from "../../../src/verify/verifier.js";

export const TOKEN = "stage-tests-token-0123456789abcdef";
export const GITHUB_SECRET = "stage-tests-github-secret";
export const SLACK_SECRET = "stage-tests-slack-secret";
export const META_SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
export const VERIFY_TOKEN = "stage-tests-verify-token";

export const quiet: HostLogger = { debug() {}, info() {}, warn() {}, error() {} };

export const tokenVerifier: Verifier = createTokenVerifier(TOKEN);

/** A clock the test moves. */
export function clockAt(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** Ids in order (`…-000000000001`, `…-000000000002`), so a test can name them. */
export function countingIds(): Ids {
  let next = 0;
  const id = () => `00000000-0000-4000-8000-${String(++next).padStart(12, "0")}`;
  return { uuid: id, markerId: () => id().slice(-16) };
}

/** A body stream that says whether anyone has started reading it. */
export function watchedBody(text: string | Buffer): Readable & { pulled(): boolean } {
  let pulled = false;
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const stream = new Readable({
    read() {
      pulled = true;
      this.push(bytes.length > 0 ? bytes : null);
      if (bytes.length > 0) this.push(null);
    },
  });
  return Object.assign(stream, { pulled: () => pulled });
}

export interface RequestInit {
  method?: string;
  /** Path and query as sent; `/hooks/wake` unless given. */
  url?: string;
  headers?: IncomingHttpHeaders;
  remoteAddress?: string;
  /** The body's bytes, or a stream standing for them. */
  body?: string | Buffer | Readable;
}

export function requestOf(init: RequestInit = {}): PipelineRequest {
  const { body = "" } = init;
  const stream =
    body instanceof Readable
      ? body
      : Readable.from(body.length > 0 ? [typeof body === "string" ? Buffer.from(body) : body] : []);
  return {
    method: init.method ?? "POST",
    url: init.url ?? "/hooks/wake",
    headers: init.headers ?? {},
    remoteAddress: init.remoteAddress ?? "192.0.2.10",
    body: stream,
  };
}

/** The request's fields (its body stream as `sent`) and the fields earlier stages would have set (`body` is the parsed one). */
export type ContextInit = Omit<RequestInit, "body"> & {
  sent?: RequestInit["body"];
} & Partial<Omit<RequestContext, "request" | "target">>;

/**
 * A context as the route leaves it (the hook named below `/hooks`, the token verifier unless given), plus the fields
 * an earlier stage would have set. Frozen: a stage that wrote to its input would throw.
 */
export function contextOf(init: ContextInit = {}): RequestContext {
  const { method, url, headers, remoteAddress, sent, ...fields } = init;
  const request = requestOf({
    ...(method !== undefined && { method }),
    ...(url !== undefined && { url }),
    ...(headers !== undefined && { headers }),
    ...(remoteAddress !== undefined && { remoteAddress }),
    ...(sent !== undefined && { body: sent }),
  });
  const target = splitTarget(request.url);
  return Object.freeze({
    request,
    requestId: "req-1",
    journalKey: { id: "req-1" },
    target,
    started: 0,
    hook: hookName(target.pathname, "/hooks") ?? "",
    verifier: tokenVerifier,
    ...fields,
  });
}

/** A context past admission: the client known. */
export function admittedContext(init: ContextInit = {}): RequestContext {
  return contextOf({ address: "192.0.2.10", client: "192.0.2.10", ...init });
}

/**
 * A context as the resolve stage leaves it: `body` sent as JSON to the hook `init.url` names (`/hooks/wake` unless
 * given), parsed, and resolved by `resolver` on its route. Frozen, like every context made here.
 */
export async function resolvedContext(
  resolver: Resolver,
  body: unknown,
  init: ContextInit = {},
): Promise<RequestContext> {
  const base = admittedContext({ identity: { via: "token", viaQuery: false }, ...init });
  const route = resolver.route(base.hook);
  if (route === undefined) throw new Error(`nothing claims ${base.hook}`);
  const text = JSON.stringify(body);
  const raw = Buffer.from(text);
  const notes = {};
  const request = { hook: base.hook, url: base.target.pathname, headers: {}, query: {}, body, rawBody: raw };
  const resolution = await resolver.resolve(
    route,
    { ...request, bodyBytes: raw.length, requestId: base.requestId },
    notes,
  );
  return Object.freeze({
    ...base,
    route,
    bodyKind: "json" as const,
    maxBytes: resolver.bodyLimit(route),
    raw,
    text,
    body,
    notes,
    resolution,
  });
}

/** Runs `stage` on `ctx` and checks that `ctx` is as it was: a stage returns what it learnt, never writes it back. */
export async function runStage(stage: Stage, ctx: RequestContext): Promise<RequestContext | Outcome> {
  const before = { ...ctx };
  try {
    return await stage(ctx);
  } finally {
    expect({ ...ctx }).toStrictEqual(before);
  }
}

/** The context a stage passes on; fails when it answered instead. */
export async function nextOf(stage: Stage, ctx: RequestContext): Promise<RequestContext> {
  const next = await runStage(stage, ctx);
  if (isOutcome(next)) throw new Error(`the stage answered ${next.response.status} instead of passing on`);
  return next;
}

/** The Outcome a stage ends the request with; fails when it passed on instead. */
export async function outcomeOf(stage: Stage, ctx: RequestContext): Promise<Outcome> {
  const next = await runStage(stage, ctx);
  if (!isOutcome(next)) throw new Error("the stage passed the request on instead of answering");
  return next;
}

/** The HookError a stage refuses with; fails when it did not refuse. */
export async function refusalOf(stage: Stage, ctx: RequestContext): Promise<HookError> {
  try {
    await runStage(stage, ctx);
  } catch (error) {
    if (isHookError(error)) return error;
    throw error;
  }
  throw new Error("the stage did not refuse the request");
}

/** The answer's JSON body. */
export function jsonOf(outcome: Outcome): unknown {
  return JSON.parse(outcome.response.body ?? "null");
}

/** A config as the operator writes it under `hooks`, prepared; fails on any issue. */
export function prepare(hooks: Record<string, unknown> = {}): PreparedHooks {
  const { prepared, issues } = prepareHooks(
    { hooks: { enabled: true, token: TOKEN, ...hooks } },
    { configDir: "/etc/gateway" },
  );
  expect(issues).toEqual([]);
  return prepared!;
}

export function verifiersOf(prepared: PreparedHooks): Verifiers {
  return createVerifiers({ token: prepared.config.token, signedPaths: prepared.signedPaths });
}

/** No transform runs in these tests: a mapping with one fails as a broken transform would. */
const NO_TRANSFORMS: TransformRunner = {
  load: async () => undefined,
  run: async () => {
    throw new Error("no transforms here");
  },
  close: async () => undefined,
};

/** The resolver the pipeline builds from a config (as src/compose.ts does), its engine on the config's mappings. */
export function resolverOf(
  prepared: PreparedHooks,
  ids: Ids = countingIds(),
  clock: Clock = clockAt(),
): Resolver {
  const { config, mappings } = prepared;
  const policy = actionPolicyOf(prepared, ids);
  return new Resolver({
    engine: new MappingEngine({
      index: new MappingIndex(mappings),
      transforms: NO_TRANSFORMS,
      policy,
      logger: quiet,
      clock,
    }),
    policy,
    mainSessionKey: config.mainSessionKey,
    maxBodyBytes: config.maxBodyBytes,
    maxTextChars: config.maxTextChars,
    ids,
  });
}

/** GitHub's `X-Hub-Signature-256` of `body` under `secret`. */
export function githubSignature(body: string | Buffer, secret = GITHUB_SECRET): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

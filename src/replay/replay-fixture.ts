/** @module Runs fixtures through the real pipeline in-process as a dry run: replay ports record nothing, and its events reach no one. */
import { Readable } from "node:stream";
import { EventEmitter } from "eventemitter3";
import type { HookAction } from "../actions/validate-action.js";
import { type ComposedHooks, composeHooks } from "../compose.js";
import { ConfigError } from "../config/issues.js";
import type { ResolveContext } from "../config/resolve.js";
import { resolvePorts } from "../container.js";
import { HookError } from "../errors.js";
import type { HookBus, PlannedEvent } from "../events.js";
import type { HostLogger, LogFields } from "../host/contract.js";
import { NULL_JOURNAL } from "../journal/null-journal.js";
import type { MappingTrace } from "../mapping/engine-types.js";
import { matchMapping } from "../mapping/mapping-engine.js";
import { CALLER_GONE, type PipelineResponse } from "../pipeline/request.js";
import { hookName } from "../pipeline/run-pipeline.js";
import { classifyContentType, parseBody } from "../pipeline/stages/parse.js";
import { type PreparedHooks, prepareHooks } from "../prepare-hooks.js";
import { headersWithoutCredentials } from "../safety/credentials.js";
import type { Store } from "../store/store.js";
import { createVerifiers } from "../verify/signature-verifier.js";
import type { LoadedFixture } from "./load-fixture.js";
import {
  type ReplaySigning,
  replaySigning,
  type SignableRequest,
  signFixtureRequest,
} from "./sign-fixture.js";
export interface ReplayLog {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields?: LogFields;
}

export interface ReplayReport {
  name: string;
  file: string;
  request: { method: string; path: string; hook: string | undefined };
  status: number;
  /** Response body; undefined for 204. */
  body: unknown;
  mappingId?: string;
  /** Every mapping's verdict, in resolution order, up to the winner. */
  candidates: MappingTrace["candidates"];
  rendered: MappingTrace["rendered"];
  transformOutput: unknown[];
  actions: HookAction[];
  events: PlannedEvent[];
  /** What the pipeline logged (mapping failures carry their reason here). */
  logs: ReplayLog[];
}

/** A fixture's request, ready to run in-process or to send. */
export interface FixtureRequest {
  method: string;
  pathname: string;
  hook: string | undefined;
  /** Path and query. */
  url: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  rawBody: Buffer;
  /** What replay had to do differently from the sender (said in the report). */
  notes: string[];
}

/** Replays never throttle (a folder of negative fixtures must not lock the next one out) nor remember deliveries. */
const replayStore: Store = {
  increment: async (_key, windowMs) => ({ count: 1, resetAt: Date.now() + windowMs }),
  peek: async () => undefined,
  reset: async () => undefined,
  claimDelivery: async () => ({ state: "first", claim: "replay" }),
  settleDelivery: async () => undefined,
  rememberDeliveries: async () => 0,
  close: async () => undefined,
};

/** The real pipeline over a prepared config, reusable across many fixtures (transforms stay loaded). */
export class ReplayPipeline {
  private readonly logs: ReplayLog[] = [];
  private readonly hooks: ComposedHooks;
  /** How replay signs each signed path. */
  private readonly signing = new Map<string, ReplaySigning>();

  constructor(private readonly prepared: PreparedHooks) {
    const log =
      (level: ReplayLog["level"]) =>
      (message: string, fields?: LogFields): void => {
        this.logs.push(fields ? { level, message, fields } : { level, message });
      };
    const logger: HostLogger = {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
    };
    for (const [hook, path] of prepared.signedPaths) this.signing.set(hook, replaySigning(path));
    const signedPaths = new Map([...this.signing].map(([hook, signing]) => [hook, signing.path]));
    // The replay ports: nothing is journaled, throttled, remembered or counted.
    const ports = resolvePorts({
      prepared,
      logger,
      options: {
        store: replayStore,
        journal: NULL_JOURNAL,
        metrics: false,
        // A changed transform is picked up by the next fixture, not 250 ms later.
        transformReloadCheckMs: 0,
        verifiers: ({ token }) => createVerifiers({ token, signedPaths }),
      },
    });
    // Nobody listens on this bus: what a fixture would cause is read from its plan.
    const bus: HookBus = new EventEmitter();
    this.hooks = composeHooks(prepared, ports, { logger, bus, capTurns: false });
  }

  /** Stops the transform workers a replay started; the pipeline is not used after this. */
  async close(): Promise<void> {
    await this.hooks.service.stop();
  }

  /** `hooks.path`, normalised. */
  get hooksPath(): string {
    return this.prepared.config.path;
  }

  /**
   * The request a fixture stands for, as its sender would send it now: headers lower-cased, the body's exact
   * bytes, signed afresh on a signed path (unless `resign: false`), else carrying `token` unless the fixture
   * brings its own credential. Replay runs it in-process; `--send` posts it to a running gateway.
   */
  buildRequest(loaded: LoadedFixture, token: string = this.prepared.config.token): FixtureRequest {
    const { fixture } = loaded;
    const request = fixture.request;
    const config = this.prepared.config;
    const pathname = request.path.startsWith("/") ? request.path : `${config.path}/${request.path}`;
    const hook = hookName(pathname, config.path);
    const signing = hook === undefined ? undefined : this.signing.get(hook);
    // A signed path is reached by its signature, as the sender reaches it; elsewhere the token gets in.
    const given = requestHeaders(request.headers, request.query, signing ? undefined : token);
    let sent: SignableRequest = {
      headers: given,
      rawBody: encodeBody(loaded, given["content-type"]),
      rawQuery: new URLSearchParams(request.query).toString(),
    };
    const notes: string[] = [];
    if (signing) {
      sent = signFixtureRequest(signing, fixture.resign, sent, Date.now());
      if (signing.note && fixture.resign !== false) notes.push(signing.note);
    }
    return {
      method: request.method.toUpperCase(),
      pathname,
      hook,
      url: sent.rawQuery ? `${pathname}?${sent.rawQuery}` : pathname,
      headers: sent.headers,
      rawBody: sent.rawBody,
      notes,
    };
  }

  async replay(loaded: LoadedFixture): Promise<ReplayReport> {
    const { fixture } = loaded;
    const config = this.prepared.config;
    const built = this.buildRequest(loaded);
    const { pathname, hook, headers, rawBody: raw } = built;
    this.logs.length = 0;
    for (const note of built.notes) this.logs.push({ level: "info", message: note });
    headers["content-length"] = String(raw.length);
    let response: PipelineResponse | undefined;
    const exchange = await this.hooks.pipeline(
      {
        method: built.method,
        url: built.url,
        headers,
        remoteAddress: "127.0.0.1",
        body: Readable.from(raw.length > 0 ? [raw] : []),
        // Nobody waits for a replay's agent turn (none runs): it answers at admission, as for a caller that left.
        hungUp: CALLER_GONE,
      },
      {
        async respond(answer) {
          response = answer;
        },
      },
    );
    const resolution = exchange.resolution;
    const trace = exchange.notes.trace;
    // A path outside hooks.path is not the intake's: a live gateway would not route it here at all.
    const outside = new HookError("NOT_FOUND", `${pathname} is not below hooks.path (${config.path}).`);
    const report: ReplayReport = {
      name: fixture.name,
      file: loaded.file,
      request: { method: built.method, path: pathname, hook },
      status: exchange.claimed ? exchange.status : outside.status,
      body: !exchange.claimed ? outside.toJSON() : responseBody(response),
      candidates: [],
      rendered: trace?.rendered ?? [],
      transformOutput: trace?.transformOutput ?? [],
      actions: resolution?.plans.map((plan) => plan.action) ?? [],
      events: resolution?.plans.flatMap((plan) => plan.events) ?? [],
      logs: [...this.logs],
    };
    if (exchange.mappingId !== undefined) report.mappingId = exchange.mappingId;
    // Why each mapping up to the owner did (not) match; every mapping's verdict when none claimed the name.
    if (hook !== undefined && hook !== "wake" && hook !== "agent" && (trace || exchange.status === 404)) {
      // The pipeline's own parse when it read the body; a best-effort one when it stopped before (404).
      const body = "body" in exchange ? exchange.body : bestEffortParse(headers["content-type"], raw);
      const shown = headersWithoutCredentials(headers);
      const verdicts = this.prepared.mappings.map((mapping) => ({
        id: mapping.id,
        ...matchMapping(mapping, { hook, body, headers: shown }),
      }));
      report.candidates = trace ? upToWinner(verdicts, exchange.mappingId) : verdicts;
    }
    return report;
  }
}

/** JSON bodies parsed; a fixed answer (TwiML, plain text) as its text. */
function responseBody(response: PipelineResponse | undefined): unknown {
  if (response?.body === undefined) return undefined;
  if (!response.headers["Content-Type"]?.includes("json")) return response.body;
  return JSON.parse(response.body);
}

/** The body as the parse stage would read it, or undefined when it would refuse it. */
function bestEffortParse(contentType: string | undefined, raw: Buffer): unknown {
  try {
    return parseBody(classifyContentType(contentType), raw);
  } catch {
    return undefined;
  }
}

/** Prepares the config once for replays; throws a ConfigError listing every problem. */
export function openReplayPipeline(rawConfig: unknown, context: ResolveContext): ReplayPipeline {
  const result = prepareHooks(rawConfig, context);
  if (!result.prepared) throw new ConfigError(result.issues);
  return new ReplayPipeline(result.prepared);
}

/**
 * The fixture's headers, lower-cased, JSON by default, and the hook token added (when given) unless the
 * fixture brings its own credential (a fixture that expects 401 sends a wrong one).
 */
function requestHeaders(
  given: Record<string, string>,
  query: Record<string, string>,
  token: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) out[name.toLowerCase()] = value;
  out["content-type"] ??= "application/json";
  const hasCredential =
    out.authorization !== undefined || out["x-service-token"] !== undefined || query.token !== undefined;
  if (!hasCredential && token !== undefined) out.authorization = `Bearer ${token}`;
  return out;
}

/** The bytes the fixture sends: rawBody/bodyFile as they are, `body` as JSON or as a form when the type says so. */
function encodeBody(loaded: LoadedFixture, contentType: string | undefined): Buffer {
  if (loaded.rawBody) return loaded.rawBody;
  const body = loaded.fixture.request.body;
  if (body === undefined) return Buffer.alloc(0);
  if (
    contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded") &&
    body &&
    typeof body === "object"
  ) {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(key, String(item));
    }
    return Buffer.from(form.toString());
  }
  return Buffer.from(JSON.stringify(body));
}

function upToWinner(all: MappingTrace["candidates"], winner: string | undefined): MappingTrace["candidates"] {
  if (winner === undefined) return all;
  const index = all.findIndex((candidate) => candidate.id === winner);
  return index === -1 ? all : all.slice(0, index + 1);
}

/** @module Runs a fixture through the real pipeline in-process with no side effects: nothing is emitted or stored. */
import { EventEmitter } from "eventemitter3";
import type { RequestDispatcher } from "../actions/dispatch-request.js";
import type { HookAction } from "../actions/validate-action.js";
import { buildHooksContainer } from "../container.js";
import type { HookBus, PlannedEvent } from "../events.js";
import type { HostLogger, LogFields } from "../host/contract.js";
import { HookError, toHookError } from "../http/errors.js";
import { hookName } from "../http/hooks-handler.js";
import { classifyContentType, parseBody } from "../http/parse-body.js";
import { tooLarge } from "../http/read-body.js";
import { headersWithoutCredentials, queryWithoutToken, urlWithoutToken } from "../http/strip-credentials.js";
import type { MappingTrace } from "../mapping/engine-types.js";
import type { DefaultMappingEngine } from "../mapping/mapping-engine.js";
import type { PreparedHooks } from "../prepare-hooks.js";
import { type RuntimeOptions, TOKENS } from "../tokens.js";
import type { LoadedFixture } from "./load-fixture.js";

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

/** An in-process pipeline over a prepared config; reusable across many fixtures. */
export class ReplayPipeline {
  private readonly logs: ReplayLog[] = [];
  private readonly dispatcher: RequestDispatcher;
  private readonly engine: DefaultMappingEngine;

  constructor(
    private readonly prepared: PreparedHooks,
    options: RuntimeOptions,
  ) {
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
    // Nobody listens on this bus and nothing is committed to it: replay only reads the plans.
    const bus: HookBus = new EventEmitter();
    const container = buildHooksContainer({
      config: prepared.config,
      mappings: prepared.mappings,
      logger,
      bus,
      options,
    });
    this.dispatcher = container.resolve(TOKENS.dispatcher);
    this.engine = container.resolve(TOKENS.mappingEngine);
  }

  async replay(loaded: LoadedFixture): Promise<ReplayReport> {
    const { fixture } = loaded;
    const request = fixture.request;
    const config = this.prepared.config;
    const pathname = request.path.startsWith("/") ? request.path : `${config.path}/${request.path}`;
    const hook = hookName(pathname, config.path);
    const report: ReplayReport = {
      name: fixture.name,
      file: loaded.file,
      request: { method: request.method.toUpperCase(), path: pathname, hook },
      status: 0,
      body: undefined,
      candidates: [],
      rendered: [],
      transformOutput: [],
      actions: [],
      events: [],
      logs: [],
    };
    this.logs.length = 0;
    try {
      if (hook === undefined)
        throw new HookError("NOT_FOUND", `${pathname} is not below hooks.path (${config.path}).`);
      if (report.request.method !== "POST") {
        throw new HookError("METHOD_NOT_ALLOWED", "Hooks accept POST only.", { headers: { Allow: "POST" } });
      }
      const route = hook === "" ? undefined : this.dispatcher.route(hook);
      const headers = lowerCaseHeaders(request.headers);
      const raw = encodeBody(loaded, headers["content-type"]);
      if (!route) {
        // Nothing claims the name: show every mapping's verdict against a best-effort parse of the body.
        report.candidates = this.engine.explain(hook, raw.length === 0 ? {} : safeJsonPreview(raw));
        throw new HookError("NOT_FOUND", "No hook is configured at this path.");
      }
      const kind = classifyContentType(headers["content-type"]);
      if (raw.length > this.dispatcher.bodyLimit(route)) throw tooLarge(this.dispatcher.bodyLimit(route));
      const parsed = parseBody(kind, raw);
      // The same credential-free view the live handler gives mappings.
      const query = Object.keys(request.query).length > 0 ? new URLSearchParams(request.query) : undefined;
      const outcome = await this.dispatcher.dispatch(route, {
        hook,
        url: urlWithoutToken(pathname, query),
        headers: headersWithoutCredentials(headers),
        query: queryWithoutToken(query),
        body: parsed,
        bodyBytes: raw.length,
        requestId: `replay-${fixture.name}`,
      });
      report.status = outcome.status;
      report.body = outcome.body;
      if (outcome.mappingId !== undefined) report.mappingId = outcome.mappingId;
      if (outcome.trace) {
        report.candidates = upToWinner(this.engine.explain(hook, parsed), outcome.mappingId);
        report.rendered = outcome.trace.rendered;
        report.transformOutput = outcome.trace.transformOutput;
      } else {
        report.candidates = [];
      }
      report.actions = outcome.plans.map((plan) => plan.action);
      report.events = outcome.plans.flatMap((plan) => plan.events);
    } catch (thrown) {
      const error = toHookError(thrown);
      report.status = error.status;
      report.body = error.toJSON();
    }
    report.logs = [...this.logs];
    return report;
  }
}

function lowerCaseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  if (out["content-type"] === undefined) out["content-type"] = "application/json";
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

/** A best-effort parse for the "why not matched" list; the real parse (with its errors) comes later. */
function safeJsonPreview(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
}

function upToWinner(all: MappingTrace["candidates"], winner: string | undefined): MappingTrace["candidates"] {
  if (winner === undefined) return all;
  const index = all.findIndex((candidate) => candidate.id === winner);
  return index === -1 ? all : all.slice(0, index + 1);
}

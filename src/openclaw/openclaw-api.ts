/** @module The slice of OpenClaw's plugin API (2026.9.x) the adapter uses, typed structurally: the package is not a dependency. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** OpenClaw's plugin logger: one message string per call. */
export interface OpenClawLogger {
  debug?(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface OpenClawHttpRoute {
  path: string;
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean | undefined> | boolean | undefined;
  auth: "gateway" | "plugin";
  match?: "exact" | "prefix";
}

export interface OpenClawServiceContext {
  stateDir?: string;
}

export interface OpenClawService {
  id: string;
  start(ctx: OpenClawServiceContext): void | Promise<void>;
  stop?(ctx: OpenClawServiceContext): void | Promise<void>;
}

export interface OpenClawSystemEventOptions {
  sessionKey: string;
  /** Scopes a plain key (`main`) to this agent; without it OpenClaw picks the owner of unscoped work. */
  agentId?: string;
  contextKey?: string;
  /** Replaces the queued event with the same contextKey instead of adding one. */
  replace?: boolean;
}

export interface OpenClawHeartbeatRequest {
  source: string;
  intent: "immediate" | "event" | string;
  reason?: string;
  /** Whose heartbeat; without it OpenClaw's heartbeat owner. */
  agentId?: string;
}

export interface OpenClawSubagentRun {
  sessionKey: string;
  message: string;
  deliver?: boolean;
  idempotencyKey?: string;
  provider?: string;
  model?: string;
}

export type OpenClawTerminalReply =
  | { disposition: "visible"; text: string }
  | { disposition: "silent" }
  | { disposition: "empty"; code?: string };

export interface OpenClawWaitResult {
  status: "ok" | "error" | "timeout" | "pending";
  error?: string;
  /** Set on a run OpenClaw timed out itself (queue, preflight, provider, post_turn, gateway_draining). */
  timeoutPhase?: string;
  endedAt?: number;
  stopReason?: string;
  livenessState?: string;
  pendingError?: boolean;
  terminalReply?: OpenClawTerminalReply;
}

export interface OpenClawOutboundAdapter {
  sendText?(params: {
    cfg: unknown;
    to: string;
    text: string;
    accountId?: string;
    threadId?: string | number;
  }): unknown;
}

/** OpenClaw's canonical route of a session (`ChannelRouteRef`): the channel and the target it last talked on. */
export interface OpenClawChannelRoute {
  channel?: string;
  accountId?: string;
  target?: { to: string; rawTo?: string; chatType?: string };
  thread?: { id: string | number };
}

/** OpenClaw's `DeliveryContext`: the flat form of the same route. */
export interface OpenClawDeliveryContext {
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

/** The part of a session entry the adapter reads: where the session last talked (`SessionDeliveryState`). */
export interface OpenClawSessionEntry {
  delivery?:
    | { kind: "none" | "internal" }
    | { kind: "external"; route?: OpenClawChannelRoute; context?: OpenClawDeliveryContext };
  /** Pre-2026.9 flat fields, which `openclaw doctor --fix` migrates into `delivery`. */
  deliveryContext?: OpenClawDeliveryContext;
  lastChannel?: string;
  lastTo?: string;
}

export interface OpenClawRuntime {
  system: {
    enqueueSystemEvent(text: string, options: OpenClawSystemEventOptions): boolean;
    requestHeartbeat(request: OpenClawHeartbeatRequest): unknown;
  };
  subagent: {
    run(params: OpenClawSubagentRun): Promise<{ runId: string; sessionKey?: string }>;
    waitForRun(params: { runId: string; timeoutMs?: number }): Promise<OpenClawWaitResult>;
  };
  channel: {
    outbound: { loadAdapter(channel: string): Promise<OpenClawOutboundAdapter | undefined> };
  };
  state?: { resolveStateDir?(): string };
  /** The session store; older releases lack `getSessionEntry`. */
  agent?: {
    session?: {
      getSessionEntry?(params: { sessionKey: string; agentId?: string }): OpenClawSessionEntry | undefined;
    };
  };
}

export type OpenClawRegistrationMode =
  | "full"
  | "discovery"
  | "tool-discovery"
  | "setup-only"
  | "setup-runtime"
  | "cli-metadata";

/** One text part of a tool's result, what the model reads. */
export interface OpenClawToolText {
  type: "text";
  text: string;
}

/** What a tool's `execute` resolves to: text for the model, `details` kept as structured data beside it. */
export interface OpenClawToolResult<T = unknown> {
  content: OpenClawToolText[];
  details: T;
}

/**
 * A concrete agent tool, as `api.registerTool` takes it (OpenClaw's `AnyAgentTool`). `parameters` is a JSON Schema
 * object (OpenClaw's TypeBox schemas are plain JSON Schema); `execute` takes the tool call id first.
 */
export interface OpenClawTool<T = unknown> {
  name: string;
  label: string;
  description: string;
  parameters: Record<string, unknown>;
  /** "network": the result carries externally controlled content, so OpenClaw taints what the model writes from it. */
  resultContentSource?: "network";
  execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<OpenClawToolResult<T>>;
}

/**
 * A Control UI contribution. A `surface: "tab"` descriptor with a `path` under one of the plugin's `auth: "gateway"`
 * routes is shown as a sidebar tab rendering that path in a sandboxed frame.
 */
export interface OpenClawControlUiDescriptor {
  id: string;
  surface: "session" | "tool" | "run" | "settings" | "tab" | "widget";
  label: string;
  description?: string;
  /** A Control UI icon name; an unknown one falls back to a generic icon. */
  icon?: string;
  path?: string;
  group?: "control" | "agent";
  order?: number;
  requiredScopes?: string[];
}

export interface OpenClawPluginApi {
  id: string;
  /** OpenClaw's whole config. Its own built-in webhooks own the top-level `hooks` key. */
  config: unknown;
  /** `plugins.entries.<id>.config`. */
  pluginConfig?: Record<string, unknown> | undefined;
  registrationMode?: OpenClawRegistrationMode | string;
  logger: OpenClawLogger;
  runtime: OpenClawRuntime;
  registerHttpRoute(route: OpenClawHttpRoute): void;
  registerService(service: OpenClawService): void;
  /** Agent tools the model may call; an older OpenClaw may lack it. */
  registerTool?(tool: OpenClawTool): void;
  /** Control UI descriptors; an older OpenClaw has only the flat, deprecated `api.registerControlUiDescriptor`, or none. */
  session?: {
    controls?: { registerControlUiDescriptor?(descriptor: OpenClawControlUiDescriptor): void };
  };
}

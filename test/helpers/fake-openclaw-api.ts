/** @module An in-process stand-in for OpenClaw's plugin API, for the adapter's unit tests (the end-to-end test runs the real one). */
import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import type {
  OpenClawControlUiDescriptor,
  OpenClawHttpRoute,
  OpenClawOutboundAdapter,
  OpenClawPluginApi,
  OpenClawService,
  OpenClawSessionEntry,
  OpenClawSubagentRun,
  OpenClawSystemEventOptions,
  OpenClawTool,
  OpenClawWaitResult,
} from "../../src/openclaw/openclaw-api.js";

/**
 * A model of OpenClaw 2026.9.6's system-event queue (src/infra/system-events.ts in its package), the part the
 * hand-off depends on: at most 20 per session, the oldest dropped silently; `replace` swaps the event with the
 * same contextKey and returns false when that event already has the same text; without `replace`, an event equal
 * to one already queued under the same contextKey (or, with none, to the last one) is dropped.
 */
export class SystemEventQueueModel {
  static readonly MAX_EVENTS = 20;
  readonly queues = new Map<string, Array<{ text: string; contextKey: string | null }>>();

  /** OpenClaw's SDK scopes a plain key to the agent it names (`main` of `ops` is `agent:ops:main`). */
  static sessionOf(options: { sessionKey: string; agentId?: string }): string {
    const { sessionKey, agentId } = options;
    return agentId === undefined || sessionKey.startsWith("agent:")
      ? sessionKey
      : `agent:${agentId}:${sessionKey}`;
  }

  enqueue(text: string, options: OpenClawSystemEventOptions): boolean {
    const session = SystemEventQueueModel.sessionOf(options);
    const queue = this.queues.get(session) ?? [];
    this.queues.set(session, queue);
    const cleaned = text.trim();
    if (!cleaned) return false;
    const contextKey = options.contextKey?.toLowerCase() ?? null;
    if (options.replace) {
      const matching = queue.filter((event) => event.contextKey === contextKey);
      if (matching.length === 1 && matching[0]?.text === cleaned) return false;
      const kept = queue.filter((event) => event.contextKey !== contextKey);
      queue.length = 0;
      queue.push(...kept);
    } else {
      const same = (event: { text: string; contextKey: string | null } | undefined) =>
        event !== undefined && event.text === cleaned && event.contextKey === contextKey;
      if (contextKey === null ? same(queue.at(-1)) : queue.some(same)) return false;
    }
    queue.push({ text: cleaned, contextKey });
    if (queue.length > SystemEventQueueModel.MAX_EVENTS) queue.shift();
    return true;
  }

  /**
   * What a heartbeat does: takes every queued text and empties the queue. It shows the model only the texts that
   * pass OpenClaw's filter of its own heartbeat notes (`compactSystemEvent`).
   */
  drain(sessionKey: string): string[] {
    const texts = (this.queues.get(sessionKey) ?? []).map((event) => event.text);
    this.queues.delete(sessionKey);
    return texts.filter((text) => {
      const lower = text.toLowerCase();
      return !(
        lower.includes("reason periodic") ||
        lower.startsWith("read heartbeat.md") ||
        lower.includes("heartbeat poll") ||
        lower.includes("heartbeat wake")
      );
    });
  }
}

/** Each fake's OpenClaw state directory (the plugin keeps its journal there), removed after the test file. */
const stateDirs = new Set<string>();
afterAll(() => {
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  stateDirs.clear();
});

function fakeStateDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-fake-openclaw-"));
  stateDirs.add(dir);
  return dir;
}

export interface FakeOpenClaw {
  api: OpenClawPluginApi;
  /** OpenClaw's state directory as the fake's runtime resolves it: a temp dir of its own, never `~/.openclaw`. */
  stateDir: string;
  queue: SystemEventQueueModel;
  routes: OpenClawHttpRoute[];
  services: OpenClawService[];
  tools: OpenClawTool[];
  descriptors: OpenClawControlUiDescriptor[];
  logs: string[];
  heartbeats: Array<{ source: string; intent: string; reason?: string }>;
  /** The runs OpenClaw accepted, one per idempotency key (as OpenClaw's agent dedupe keeps them). */
  runs: OpenClawSubagentRun[];
  /** What `waitForRun` answers, per call; `pending` until a test says otherwise. */
  waitResult: (runId: string) => OpenClawWaitResult;
  adapters: Map<string, OpenClawOutboundAdapter>;
  sent: Array<{ channel: string; to: string; text: string; accountId?: string; threadId?: string | number }>;
  /** OpenClaw's session store, by canonical key (`agent:main:main`): what `getSessionEntry` answers. */
  sessionEntries: Map<string, OpenClawSessionEntry>;
  /** Every `getSessionEntry` call's params. */
  sessionReads: Array<{ sessionKey: string; agentId?: string }>;
  /**
   * The scope OpenClaw runs a route's handler in (its plugin request scope, which carries the sender's rights, none
   * for an `auth: "plugin"` route): `getStore()` is the route's path inside a handler, undefined outside one.
   */
  requestScope: AsyncLocalStorage<string>;
  /**
   * Puts the queue where OpenClaw 2026.9.6 keeps its own, a process-global map (`{ queue }` per session key), for as
   * long as the returned function is not called.
   */
  exposeQueues(): () => void;
  /** Serves the registered routes the way OpenClaw does: a handler that returns true answered. */
  listen(): Promise<{ url: string; close(): Promise<void> }>;
}

export function fakeOpenClaw(options: {
  config?: unknown;
  pluginConfig?: Record<string, unknown>;
  registrationMode?: string;
  /** An older OpenClaw: no `registerTool`, no `api.session.controls`. */
  withoutToolsAndTabs?: boolean;
  /** The state directory of an earlier fake: the same OpenClaw started again. */
  stateDir?: string;
}): FakeOpenClaw {
  const queue = new SystemEventQueueModel();
  const stateDir = options.stateDir ?? fakeStateDir();
  const fake: FakeOpenClaw = {
    stateDir,
    queue,
    routes: [],
    services: [],
    tools: [],
    descriptors: [],
    logs: [],
    heartbeats: [],
    runs: [],
    waitResult: () => ({ status: "pending" }),
    adapters: new Map(),
    sent: [],
    requestScope: new AsyncLocalStorage<string>(),
    exposeQueues() {
      const key = Symbol.for("openclaw.systemEvents.queues");
      const global = globalThis as Record<symbol, unknown>;
      Object.defineProperty(global, key, {
        configurable: true,
        get: () => new Map([...queue.queues].map(([session, events]) => [session, { queue: events }])),
      });
      return () => {
        delete global[key];
      };
    },
    sessionEntries: new Map(),
    sessionReads: [],
    api: undefined as unknown as OpenClawPluginApi,
    async listen() {
      const server: Server = createServer(async (req, res) => {
        for (const route of fake.routes) {
          const path = (req.url ?? "/").split("?")[0] ?? "/";
          if (path === route.path || path.startsWith(`${route.path}/`)) {
            if (await fake.requestScope.run(route.path, () => route.handler(req, res))) return;
          }
        }
        res.writeHead(404).end("not found");
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const { port } = server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  };
  const log = (level: string) => (message: string) => fake.logs.push(`${level} ${message}`);
  fake.api = {
    id: "hooks-intake",
    config: options.config ?? {},
    pluginConfig: options.pluginConfig,
    registrationMode: options.registrationMode ?? "full",
    logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    runtime: {
      state: { resolveStateDir: () => stateDir },
      agent: {
        session: {
          getSessionEntry: (params) => {
            fake.sessionReads.push(params);
            return fake.sessionEntries.get(params.sessionKey);
          },
        },
      },
      system: {
        enqueueSystemEvent: (text, eventOptions) => queue.enqueue(text, eventOptions),
        requestHeartbeat: (request) => fake.heartbeats.push(request),
      },
      subagent: {
        // OpenClaw's agent dedupe: a second call with the same idempotency key answers with the run it accepted.
        run: async (params) => {
          const key = params.idempotencyKey ?? "run";
          if (!fake.runs.some((run) => (run.idempotencyKey ?? "run") === key)) fake.runs.push(params);
          return { runId: key };
        },
        waitForRun: async ({ runId }) => fake.waitResult(runId),
      },
      channel: {
        outbound: {
          loadAdapter: async (channel) => {
            const adapter = fake.adapters.get(channel);
            if (!adapter) return undefined;
            return {
              sendText: async (params: {
                cfg: unknown;
                to: string;
                text: string;
                accountId?: string;
                threadId?: string | number;
              }) => {
                const { cfg: _cfg, ...sent } = params;
                fake.sent.push({ channel, ...sent });
                return adapter.sendText?.(params);
              },
            };
          },
        },
      },
    },
    registerHttpRoute: (route) => fake.routes.push(route),
    registerService: (service) => fake.services.push(service),
    ...(options.withoutToolsAndTabs
      ? {}
      : {
          registerTool: (tool: OpenClawTool) => fake.tools.push(tool),
          session: {
            controls: {
              registerControlUiDescriptor: (descriptor: OpenClawControlUiDescriptor) =>
                fake.descriptors.push(descriptor),
            },
          },
        }),
  };
  return fake;
}

/** @module The reference gateway's own config sections (server, session, heartbeat, runner, channels, state, log), validated with every problem listed. */
import * as v from "valibot";
import { CHANNEL_IDS, type ConfigIssue, fromValibotIssues, PluginGatewayConfigSchema } from "../index.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 18789;
export const DEFAULT_HEARTBEAT_SECONDS = 1800;
/**
 * A client gets this long to send its request line and headers. Node's defaults (60 s, checked every 30 s) let a
 * client that never finishes its headers hold a socket, unauthenticated, for up to 90 s.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/**
 * The whole request (headers and body) must arrive within this. Longer than the plugin's body deadline
 * (`hooks.bodyTimeoutMs`, 30 s by default), which answers first with its own error.
 */
export const REQUEST_TIMEOUT_MS = 60_000;
/** Simultaneous connections the gateway accepts; more are closed as they arrive. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/**
 * Connections one client address may hold, and how many of them may be sending a request (headers or body) at
 * once: a quarter of the server's cap, so one address cannot take every connection before any token is checked,
 * and above a burst one client may send at once (a burst's connections all count as sending when they arrive).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
export const DEFAULT_MAX_PENDING_PER_ADDRESS = 256;
/** Days the state database keeps the transcript, the outbox and session messages. */
export const DEFAULT_RETAIN_DAYS = 30;
/** The log file is rotated when it passes this size, and this many rotated files are kept. */
export const DEFAULT_LOG_MAX_SIZE_MB = 10;
export const DEFAULT_LOG_KEEP = 5;
/**
 * The most an `openai` runner reads of one reply. An answer is text for a person; without a bound, an endpoint that
 * streams hundreds of megabytes fills the gateway's memory and stalls it while the whole body is parsed.
 */
export const DEFAULT_MAX_REPLY_BYTES = 1_048_576;
/** The longest one chat-completions request may take, reply included, whatever a turn's own timeout says. */
export const DEFAULT_REPLY_TIMEOUT_SECONDS = 600;

const Port = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0), v.maxValue(65535));
const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));
const Channel = v.picklist(CHANNEL_IDS, `must be one of ${CHANNEL_IDS.join(", ")}`);

const PositiveInt = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1));
/** An environment variable name; `HOOKS_*` are the variables the runner sets for each turn. */
const EnvName = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name (letters, digits, _)"),
  v.check(
    (name) => !name.startsWith("HOOKS_"),
    "names starting with HOOKS_ are set by the runner for each turn",
  ),
);

export const ServerSchema = v.strictObject({
  host: v.optional(NonEmpty, DEFAULT_HOST),
  port: v.optional(Port, DEFAULT_PORT),
  /** Milliseconds a client has to send the request line and headers; a socket that stalls is closed then. */
  headersTimeoutMs: v.optional(
    v.pipe(PositiveInt, v.maxValue(REQUEST_TIMEOUT_MS, `must be at most ${REQUEST_TIMEOUT_MS}`)),
    DEFAULT_HEADERS_TIMEOUT_MS,
  ),
  /** Simultaneous connections; one more is closed at once. */
  maxConnections: v.optional(PositiveInt, DEFAULT_MAX_CONNECTIONS),
  /**
   * Connections one client address (the socket's peer) may hold; one more is answered 429 and closed. A trusted
   * proxy (`hooks.trustedProxies`) is not held to it: it speaks for many clients.
   */
  maxConnectionsPerAddress: v.optional(PositiveInt, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS),
  /** Of those, connections still sending their request's headers or body; one more is answered 429 and closed. */
  maxPendingPerAddress: v.optional(PositiveInt, DEFAULT_MAX_PENDING_PER_ADDRESS),
  /** `GET /metrics` in Prometheus text format; `false` serves none and the plugin counts nothing. */
  metrics: v.optional(v.boolean(), true),
  /** When set, `GET /metrics` requires `Authorization: Bearer <metricsToken>`. Never logged. */
  metricsToken: v.optional(NonEmpty),
});

export const LastRouteSchema = v.strictObject({
  channel: Channel,
  to: v.optional(NonEmpty),
});

export const SessionSchema = v.strictObject({
  /** The main session's key; no hook caller may target it. */
  mainKey: v.optional(NonEmpty, "main"),
  /** Where `channel: "last"` goes until a delivery updates it. */
  lastRoute: v.optional(LastRouteSchema),
});

export const HeartbeatSchema = v.strictObject({
  /** Seconds between periodic heartbeats; 0 turns the periodic one off (requested heartbeats still run). */
  everySeconds: v.optional(
    v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0)),
    DEFAULT_HEARTBEAT_SECONDS,
  ),
});

export const StateSchema = v.strictObject({
  /**
   * Days the transcript, the outbox and session messages are kept; older rows are deleted at start and hourly.
   * The queue is never purged: it is work not yet delivered. A session key unused this long starts fresh.
   */
  retainDays: v.optional(
    v.pipe(v.number(), v.minValue(0.0001, "must be more than 0 (a fraction of a day is allowed)")),
    DEFAULT_RETAIN_DAYS,
  ),
});

export const LogSchema = v.strictObject({
  /** JSON log lines also go to this file (relative to the config file); `--log-file` overrides it. */
  file: v.optional(NonEmpty),
  /** The file is rotated once it passes this many megabytes (MiB). */
  maxSizeMb: v.optional(PositiveInt, DEFAULT_LOG_MAX_SIZE_MB),
  /** Rotated files kept beside it (`<file>.1` newest … `<file>.<keep>` oldest). */
  keep: v.optional(PositiveInt, DEFAULT_LOG_KEEP),
});

export const EchoRunnerSchema = v.strictObject({ kind: v.literal("echo") });

export const CommandRunnerSchema = v.strictObject({
  kind: v.literal("command"),
  /** Program to spawn (no shell); the message arrives on stdin, the reply is read from stdout. */
  command: NonEmpty,
  args: v.optional(v.array(v.string()), []),
  /** Working directory, relative to the config file; default: the config file's directory. */
  cwd: v.optional(NonEmpty),
  /**
   * Names of variables the program gets from the gateway's environment, e.g. `["OPENAI_API_KEY"]`; a name that
   * is not set is left out. The program always gets PATH, HOME, LANG and TZ (when set) and the turn's HOOKS_*
   * variables, and nothing else: not the gateway's tokens or keys unless named here.
   */
  env: v.optional(v.array(EnvName), []),
});

export const OpenAiRunnerSchema = v.strictObject({
  kind: v.literal("openai"),
  /** Base URL of an OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  baseUrl: v.pipe(v.string(), v.url("must be an absolute URL")),
  model: NonEmpty,
  /** Name of the environment variable holding the API key; the key itself never sits in the file. */
  apiKeyEnv: v.optional(NonEmpty),
  /** A reply longer than this many bytes is not read further: the request is aborted and the turn ends as an error. */
  maxReplyBytes: v.optional(PositiveInt, DEFAULT_MAX_REPLY_BYTES),
  /** Seconds one request may take, until the last byte of its reply; past it the turn ends as an error. */
  replyTimeoutSeconds: v.optional(PositiveInt, DEFAULT_REPLY_TIMEOUT_SECONDS),
});

export const RunnerSchema = v.variant(
  "kind",
  [EchoRunnerSchema, CommandRunnerSchema, OpenAiRunnerSchema],
  'kind must be "echo", "command" or "openai"',
);

/** The sections only the reference gateway reads; `hooks` and the rest belong to the plugin. */
export const GatewaySectionsSchema = v.object({
  server: v.optional(ServerSchema, {}),
  session: v.optional(SessionSchema, {}),
  heartbeat: v.optional(HeartbeatSchema, {}),
  runner: v.optional(RunnerSchema, { kind: "echo" }),
  /** Channels the gateway offers to the plugin; default all eight. */
  channels: v.optional(v.array(Channel), [...CHANNEL_IDS]),
  state: v.optional(StateSchema, {}),
  /** Unset: logs go to stdout only. */
  log: v.optional(LogSchema),
});

/** The whole config file `hooks serve` reads: the plugin's slice plus the gateway's sections, and nothing else. */
export const GatewayConfigSchema = v.strictObject({
  ...PluginGatewayConfigSchema.entries,
  ...GatewaySectionsSchema.entries,
});

export type GatewaySections = v.InferOutput<typeof GatewaySectionsSchema>;
export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
export type RunnerConfig = v.InferOutput<typeof RunnerSchema>;
export type CommandRunnerConfig = v.InferOutput<typeof CommandRunnerSchema>;
export type OpenAiRunnerConfig = v.InferOutput<typeof OpenAiRunnerSchema>;
export type LastRoute = v.InferOutput<typeof LastRouteSchema>;
export type LogConfig = v.InferOutput<typeof LogSchema>;

const KNOWN_KEYS: Record<string, readonly string[]> = {
  "": Object.keys(GatewayConfigSchema.entries),
  server: Object.keys(ServerSchema.entries),
  session: Object.keys(SessionSchema.entries),
  "session.lastRoute": Object.keys(LastRouteSchema.entries),
  heartbeat: Object.keys(HeartbeatSchema.entries),
  state: Object.keys(StateSchema.entries),
  log: Object.keys(LogSchema.entries),
  runner: [
    ...new Set([...Object.keys(CommandRunnerSchema.entries), ...Object.keys(OpenAiRunnerSchema.entries)]),
  ],
};

const NO_KEYS = v.strictObject({});

/**
 * Every top-level key the file has and the gateway config does not know (`hook:`, `sever:`), each with its "did you
 * mean". Checked key by key: a strict object reports only the first unknown key, and a person fixing a file wants
 * them all in one round.
 */
function unknownTopLevelKeys(raw: unknown): ConfigIssue[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  const known = KNOWN_KEYS[""]!;
  return Object.keys(raw)
    .filter((key) => !known.includes(key))
    .flatMap((key) => fromValibotIssues("", v.safeParse(NO_KEYS, { [key]: null }).issues ?? [], () => known));
}

export interface GatewaySectionsResult {
  /** Defaults when the sections are invalid, so later checks can still run and report their own problems. */
  sections: GatewaySections;
  issues: ConfigIssue[];
}

/** Validates the gateway's own sections, plus the rules a schema cannot say (route offered, key set in env). */
export function parseGatewaySections(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
): GatewaySectionsResult {
  const unknownKeys = unknownTopLevelKeys(raw);
  // The plugin's slice (`hooks`, ...) is the plugin's to check: its problems are listed once, by the plugin.
  const parsed = v.safeParse(GatewaySectionsSchema, raw ?? {});
  if (!parsed.success) {
    return {
      sections: v.parse(GatewaySectionsSchema, {}),
      issues: [...unknownKeys, ...fromValibotIssues("", parsed.issues, (at) => KNOWN_KEYS[at])],
    };
  }
  const sections = parsed.output;
  const issues: ConfigIssue[] = [...unknownKeys];
  const lastRoute = sections.session.lastRoute;
  if (lastRoute && !sections.channels.includes(lastRoute.channel)) {
    issues.push({ path: "session.lastRoute.channel", message: `"${lastRoute.channel}" is not in channels` });
  }
  if (
    sections.runner.kind === "openai" &&
    sections.runner.apiKeyEnv &&
    env[sections.runner.apiKeyEnv] === undefined
  ) {
    issues.push({
      path: "runner.apiKeyEnv",
      message: `environment variable ${sections.runner.apiKeyEnv} is not set`,
    });
  }
  return { sections, issues };
}

/** @module The reference gateway's own config sections (server, session, heartbeat, runner, channels, state, log), validated with every problem listed. */
import * as v from "valibot";
import {
  CHANNEL_IDS,
  type ConfigIssue,
  fromValibotIssues,
  PluginGatewayConfigSchema,
  readSecrets,
  secretField,
  withoutIssuesAt,
} from "../index.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 18789;
/** The inspector's own port: the next one up, so it is never the intake's. */
export const DEFAULT_INSPECTOR_PORT = 18790;
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
/** Simultaneous connections the gateway holds; past them, a newcomer takes the place of a connection that waits, or gets 503. */
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

export const InspectorSchema = v.strictObject({
  enabled: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "Serve the inspector page (every request, refused ones too, with its detail and replay) on its own port. Needs hooks enabled ([The inspector](inspector.md)).",
    ),
  ),
  host: v.pipe(
    v.optional(NonEmpty, DEFAULT_HOST),
    v.description(
      "Address the inspector binds. Keep it on loopback: the page shows payloads; reach it from elsewhere through an SSH tunnel.",
    ),
  ),
  port: v.pipe(
    v.optional(Port, DEFAULT_INSPECTOR_PORT),
    v.description(
      "Port the inspector binds; 0 = any free port. When the gateway itself takes any free port (`server.port: 0`, `--port 0`), so does the inspector.",
    ),
  ),
  key: v.pipe(
    v.optional(secretField(v.pipe(v.string(), v.minLength(16, "must be at least 16 characters")))),
    v.description(
      "`hooks serve` prints a link that logs in with a key made for each start; set one here to keep it across restarts: it is then never printed. Compared in constant time; wrong keys are counted per client address as wrong hook tokens are.",
    ),
  ),
});

export const ServerSchema = v.strictObject({
  host: v.pipe(v.optional(NonEmpty, DEFAULT_HOST), v.description("Address to bind. `--host` overrides it.")),
  port: v.pipe(
    v.optional(Port, DEFAULT_PORT),
    v.description("Port to bind; 0 = any free port. `--port` overrides it."),
  ),
  headersTimeoutMs: v.pipe(
    v.optional(
      v.pipe(PositiveInt, v.maxValue(REQUEST_TIMEOUT_MS, `must be at most ${REQUEST_TIMEOUT_MS}`)),
      DEFAULT_HEADERS_TIMEOUT_MS,
    ),
    v.description(
      "Milliseconds a client has to send its request line and headers; a connection that has not sent them by then gets `408 Request Timeout` from Node and is closed. Before any token is checked, this is what bounds a client that sends its headers slowly or never. The whole request (headers and body) is bounded too, by the larger of 60 s and `hooks.bodyTimeoutMs` plus this; the plugin's own body deadline answers first.",
    ),
  ),
  maxConnections: v.pipe(
    v.optional(PositiveInt, DEFAULT_MAX_CONNECTIONS),
    v.description(
      "Simultaneous connections, all addresses together (peers in `hooks.trustedProxies` included). When the gateway holds this many, a new connection takes the place of the longest-waiting connection (one that has not sent a whole request's headers yet, or a kept-alive one between requests) of the address that has the most of them waiting, if that address holds at least two more connections than the newcomer's; a connection whose request is under way is never cut. When nobody gives way, the newcomer is answered `503 SERVER_BUSY` (`Retry-After: 1`) and closed ([Sharing the connections](gateway.md#sharing-the-connections)).",
    ),
  ),
  maxConnectionsPerAddress: v.pipe(
    v.optional(PositiveInt, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS),
    v.description(
      "Connections one client address (an IPv6 /64: see [What counts as one client address](gateway.md#what-counts-as-one-client-address)) may hold at once, whatever they are doing. One more is answered `429 CLIENT_BUSY` (`Retry-After: 1`, `Connection: close`) as it arrives and closed as soon as that answer is written, so one address cannot fill `maxConnections` before any token is checked. A peer in `hooks.trustedProxies` is not held to it ([Behind a proxy](gateway.md#behind-a-proxy)).",
    ),
  ),
  maxPendingPerAddress: v.pipe(
    v.optional(PositiveInt, DEFAULT_MAX_PENDING_PER_ADDRESS),
    v.description(
      "Of those, how many may be sending a request (still in its headers or its body) at once: a connection counts from its arrival until its request's body has arrived (or its answer has left), and again from each later request's headers; an idle kept-alive connection does not. One more connection is refused as above; a kept-alive connection that starts a request beyond it gets `429` and is closed. The connections of a burst all count while they arrive, so keep it above the largest burst one client sends; lower it to bound slow clients more tightly.",
    ),
  ),
  metrics: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "`GET /metrics`: the plugin's Prometheus metrics and the process's own, on this port outside `hooks.path`. `false`: no endpoint, and the plugin counts nothing ([Metrics](metrics.md#metrics-prometheus)).",
    ),
  ),
  metricsToken: v.pipe(
    v.optional(secretField(NonEmpty)),
    v.description(
      `When set, \`GET /metrics\` requires \`Authorization: Bearer <metricsToken>\` (else \`401\`). Compared in constant time, never logged. Wrong tokens are counted per client address as wrong hook tokens are (\`hooks.authFailures\`, in \`hooks.store\`, counted apart from them): past the limit the address gets \`429\` with \`Retry-After\` until the window ends; the right token is always served and clears the count.`,
    ),
  ),
  inspector: v.pipe(
    v.optional(InspectorSchema, {}),
    v.description("The inspector page, on a port of its own ([The inspector](inspector.md))."),
  ),
});

export const LastRouteSchema = v.strictObject({
  channel: v.pipe(Channel, v.description("The channel; it must be in `channels`.")),
  to: v.pipe(v.optional(NonEmpty), v.description("The recipient on that channel.")),
});

export const SessionSchema = v.strictObject({
  mainKey: v.pipe(
    v.optional(NonEmpty, "main"),
    v.description("The main session's key, passed to the plugin; no hook may target it."),
  ),
  lastRoute: v.pipe(
    v.optional(LastRouteSchema),
    v.description(
      'Where `channel: "last"` goes until a delivery moves it. Once a delivery happened, the last route kept in the state database wins over this.',
    ),
  ),
});

export const HeartbeatSchema = v.strictObject({
  everySeconds: v.pipe(
    v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0)), DEFAULT_HEARTBEAT_SECONDS),
    v.description(
      "Seconds between periodic heartbeats; `0` turns the periodic one off (requested heartbeats still run).",
    ),
  ),
});

export const StateSchema = v.strictObject({
  retainDays: v.pipe(
    v.optional(
      v.pipe(v.number(), v.minValue(0.0001, "must be more than 0 (a fraction of a day is allowed)")),
      DEFAULT_RETAIN_DAYS,
    ),
    v.description(
      "Days the state database keeps the transcript, the outbox and session messages (a fraction is allowed: `0.5` is twelve hours); older rows are deleted at start and every hour (or four times per period when that is shorter). The queue is never purged. A session key unused this long starts fresh ([Retention](gateway.md#retention)).",
    ),
  ),
});

export const LogSchema = v.strictObject({
  file: v.pipe(
    v.optional(NonEmpty),
    v.description(
      "The JSON log lines also go to this file (relative to the config file's directory), rotated by size ([Log file](gateway.md#log-file)). `--log-file` overrides it.",
    ),
  ),
  maxSizeMb: v.pipe(
    v.optional(PositiveInt, DEFAULT_LOG_MAX_SIZE_MB),
    v.description("The log file is rotated once it passes this many MiB."),
  ),
  keep: v.pipe(
    v.optional(PositiveInt, DEFAULT_LOG_KEEP),
    v.description("Rotated files kept: `<file>.1` (newest) … `<file>.<keep>`; an older one is deleted."),
  ),
});

export const EchoRunnerSchema = v.pipe(
  v.strictObject({ kind: v.literal("echo") }),
  v.description("Replies with the turn's raw (unwrapped) text. Deterministic; for development and tests."),
);

export const CommandRunnerSchema = v.pipe(
  v.strictObject({
    kind: v.literal("command"),
    command: v.pipe(NonEmpty, v.description("The program to spawn (no shell).")),
    args: v.pipe(v.optional(v.array(v.string()), []), v.description("Its arguments.")),
    cwd: v.pipe(
      v.optional(NonEmpty),
      v.description(
        "Its working directory, relative to the config file. Unset: the config file's directory.",
      ),
    ),
    env: v.pipe(
      v.optional(v.array(EnvName), []),
      v.description(
        'Names of variables passed on from the gateway\'s environment, e.g. `["OPENAI_API_KEY"]`; a name that is not set is left out. Each must be a variable name (letters, digits, `_`, not starting with a digit); names starting with `HOOKS_` are refused, since the runner sets those for each turn.',
      ),
    ),
  }),
  v.description(
    "Spawns `command` with `args` per turn. The (wrapped) message goes to stdin; stdout, trimmed, is the reply; a non-zero exit is an error with the last stderr line. Output past 1 MiB is cut. On timeout: SIGTERM, then SIGKILL 2 s later. Environment: only `PATH`, `HOME`, `LANG` and `TZ` (each when set), the variables named in `env`, and the turn's own `HOOKS_RUN_ID`, `HOOKS_SESSION_KEY`, `HOOKS_SESSION_FILE` (a temporary file with the session's last 40 messages as JSON lines, removed when the turn ends), `HOOKS_MODEL` and `HOOKS_THINKING` (when set). Nothing else of the gateway's environment reaches the program, so the variables behind `hooks.token`, `gateway.auth.token`, an `apiKeyEnv` or the mailbox password stay out of its environment unless you name them (on Linux a program of the same user can still read the gateway's own through `/proc`: a secret given as `{ file }` is in no environment).",
  ),
);

export const OpenAiRunnerSchema = v.pipe(
  v.strictObject({
    kind: v.literal("openai"),
    baseUrl: v.pipe(
      v.string(),
      v.url("must be an absolute URL"),
      v.description(
        "Base URL of an OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1` for a local model server; `/chat/completions` is appended.",
      ),
    ),
    model: v.pipe(
      NonEmpty,
      v.description(
        "The model, used unless the turn names one (`provider/model` sends the part after the first `/`).",
      ),
    ),
    apiKeyEnv: v.pipe(
      v.optional(NonEmpty),
      v.description(
        "Name of the environment variable holding the API key, sent as `Authorization: Bearer`; the key itself never sits in the file. A variable that is not set is a config error.",
      ),
    ),
    maxReplyBytes: v.pipe(
      v.optional(PositiveInt, DEFAULT_MAX_REPLY_BYTES),
      v.description(
        "A reply longer than this many bytes is not read further: the request is aborted and the turn ends as an error.",
      ),
    ),
    replyTimeoutSeconds: v.pipe(
      v.optional(PositiveInt, DEFAULT_REPLY_TIMEOUT_SECONDS),
      v.description(
        "Seconds one request may take, until the last byte of its reply, whatever the turn's own `timeoutSeconds`; past it the turn ends as an error.",
      ),
    ),
  }),
  v.description(
    "POSTs to `<baseUrl>/chat/completions` with the session's last 40 messages plus the (wrapped) message; the reply is `choices[0].message.content`. `thinking` is not sent. The reply is read as it arrives: one past `maxReplyBytes` or `replyTimeoutSeconds` is abandoned, its connection closed, and the turn ends as an error saying which bound it passed, so a misbehaving endpoint can neither fill the gateway's memory nor stall it.",
  ),
);

export const RunnerSchema = v.variant(
  "kind",
  [EchoRunnerSchema, CommandRunnerSchema, OpenAiRunnerSchema],
  'kind must be "echo", "command" or "openai"',
);

/** The sections only the reference gateway reads; `hooks` and the rest belong to the plugin. */
export const GatewaySectionsSchema = v.object({
  server: v.pipe(
    v.optional(ServerSchema, {}),
    v.description("The HTTP server: where it listens, how long clients get, how many connections it holds."),
  ),
  session: v.pipe(v.optional(SessionSchema, {}), v.description("The main session and its last route.")),
  heartbeat: v.optional(HeartbeatSchema, {}),
  runner: v.pipe(v.optional(RunnerSchema, { kind: "echo" }), v.description("How agent turns run.")),
  channels: v.pipe(
    v.optional(v.array(Channel), [...CHANNEL_IDS]),
    v.description(
      "Channels the gateway offers to the plugin (`host.channels`); an agent action naming another is a 400.",
    ),
  ),
  state: v.optional(StateSchema, {}),
  log: v.pipe(
    v.optional(LogSchema),
    v.description("A log file beside stdout. Unset: logs go to stdout only."),
  ),
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
  "server.inspector": Object.keys(InspectorSchema.entries),
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

/**
 * Validates the gateway's own sections, plus the rules a schema cannot say (route offered, key set in env). Their
 * secrets' files and variables are read here, at each call: `configDir` is what a relative `{ file }` is relative to.
 */
export function parseGatewaySections(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  configDir: string = process.cwd(),
): GatewaySectionsResult {
  const unknownKeys = unknownTopLevelKeys(raw);
  const secrets = readSecrets(GatewaySectionsSchema, raw ?? {}, { configDir, env });
  // The plugin's slice (`hooks`, ...) is the plugin's to check: its problems are listed once, by the plugin.
  const parsed = v.safeParse(GatewaySectionsSchema, secrets.value);
  if (!parsed.success) {
    const shape = fromValibotIssues("", parsed.issues, (at) => KNOWN_KEYS[at]);
    return {
      sections: v.parse(GatewaySectionsSchema, {}),
      issues: [...unknownKeys, ...secrets.issues, ...withoutIssuesAt(shape, secrets.issues)],
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
      variable: sections.runner.apiKeyEnv,
    });
  }
  return { sections, issues };
}

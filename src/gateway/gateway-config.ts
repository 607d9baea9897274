/** @module The reference gateway's own config sections (server, session, heartbeat, runner, channels), validated with every problem listed. */
import * as v from "valibot";
import { type ConfigIssue, fromValibotIssues } from "../config/issues.js";
import { PluginGatewayConfigSchema } from "../config/schema.js";
import { CHANNEL_IDS } from "../events.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 18789;
export const DEFAULT_HEARTBEAT_SECONDS = 1800;

const Port = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0), v.maxValue(65535));
const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));
const Channel = v.picklist(CHANNEL_IDS, `must be one of ${CHANNEL_IDS.join(", ")}`);

export const ServerSchema = v.strictObject({
  host: v.optional(NonEmpty, DEFAULT_HOST),
  port: v.optional(Port, DEFAULT_PORT),
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

export const EchoRunnerSchema = v.strictObject({ kind: v.literal("echo") });

export const CommandRunnerSchema = v.strictObject({
  kind: v.literal("command"),
  /** Program to spawn (no shell); the message arrives on stdin, the reply is read from stdout. */
  command: NonEmpty,
  args: v.optional(v.array(v.string()), []),
  /** Working directory, relative to the config file; default: the config file's directory. */
  cwd: v.optional(NonEmpty),
});

export const OpenAiRunnerSchema = v.strictObject({
  kind: v.literal("openai"),
  /** Base URL of an OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  baseUrl: v.pipe(v.string(), v.url("must be an absolute URL")),
  model: NonEmpty,
  /** Name of the environment variable holding the API key; the key itself never sits in the file. */
  apiKeyEnv: v.optional(NonEmpty),
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
});

/** The whole config file `hooks serve` reads: the plugin's slice plus the gateway's sections; other keys pass. */
export const GatewayConfigSchema = v.looseObject({
  ...PluginGatewayConfigSchema.entries,
  ...GatewaySectionsSchema.entries,
});

export type GatewaySections = v.InferOutput<typeof GatewaySectionsSchema>;
export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
export type RunnerConfig = v.InferOutput<typeof RunnerSchema>;
export type CommandRunnerConfig = v.InferOutput<typeof CommandRunnerSchema>;
export type OpenAiRunnerConfig = v.InferOutput<typeof OpenAiRunnerSchema>;
export type LastRoute = v.InferOutput<typeof LastRouteSchema>;

const KNOWN_KEYS: Record<string, readonly string[]> = {
  server: Object.keys(ServerSchema.entries),
  session: Object.keys(SessionSchema.entries),
  "session.lastRoute": Object.keys(LastRouteSchema.entries),
  heartbeat: Object.keys(HeartbeatSchema.entries),
  runner: [
    ...new Set([...Object.keys(CommandRunnerSchema.entries), ...Object.keys(OpenAiRunnerSchema.entries)]),
  ],
};

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
  const parsed = v.safeParse(GatewaySectionsSchema, raw ?? {});
  if (!parsed.success) {
    return {
      sections: v.parse(GatewaySectionsSchema, {}),
      issues: fromValibotIssues("", parsed.issues, (at) => KNOWN_KEYS[at]),
    };
  }
  const sections = parsed.output;
  const issues: ConfigIssue[] = [];
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

/** @module Turns the raw gateway config into the plugin's resolved config, or every problem with its path. */
import path from "node:path";
import * as v from "valibot";
import { CHANNEL_IDS } from "../vocabulary.js";
import { loadAddressRanges, type NamedRanges } from "./address-ranges.js";
import { type AgentPolicy, createAgentPolicy, type HostAgents, ONE_AGENT } from "./agents.js";
import { checkAllowFrom } from "./allow-from.js";
import { normalizeHooksPath } from "./hooks-path.js";
import { type ConfigIssue, fromValibotIssues, withoutIssuesAt } from "./issues.js";
import { LIMITS_KEYS } from "./limits-schema.js";
import {
  MappingMatchSchema,
  MappingResponseSchema,
  MappingSchema,
  MappingTransformSchema,
  MappingVerifySchema,
} from "./mapping-schema.js";
import { createModelPolicy, type ModelPolicy } from "./models.js";
import { field } from "./plain-object.js";
import { readSecrets } from "./read-secrets.js";
import {
  AdmissionSchema,
  AuthFailuresSchema,
  DedupeSchema,
  type HooksConfig,
  HooksConfigSchema,
  type JournalConfig,
  JournalSchema,
  MailboxConfigSchema,
  type PluginGatewayConfig,
  PluginGatewayConfigSchema,
  StoreSchema,
  TransformsSchema,
} from "./schema.js";
import { checkTrustedProxies } from "./trusted-proxies.js";

/** A token shorter than this is accepted but logged as weak. */
export const WEAK_TOKEN_LENGTH = 24;
/**
 * A token shorter than this is refused, at a start and on a reload alike: a reload applies a config nobody watches
 * start, so a guessable token must not go live there with only a log line.
 */
export const MIN_TOKEN_LENGTH = 16;
/** A token that is a whole `${VAR}`, in a config whose variables are not read yet. */
const UNREAD_VARIABLE = /^\$\{\w+\}$/;
export const DEFAULT_CHANNELS = CHANNEL_IDS.filter((id) => id !== "mattermost");

/** The journal as the plugin runs it: `dir` absolute, or undefined when there is nowhere to keep it. */
export interface ResolvedJournalConfig extends Omit<JournalConfig, "dir"> {
  dir: string | undefined;
}

/** The directory the journal goes in, if any: the config's (relative to the config file) or the host's state dir. */
function journalDir(journal: JournalConfig, context: ResolveContext): string | undefined {
  if (!journal.enabled) return undefined;
  if (journal.dir !== undefined) return path.resolve(context.configDir, journal.dir);
  return context.stateDir === undefined ? undefined : journalDirIn(context.stateDir);
}

/** Where the journal is kept when the config names no directory: in the host's state directory. */
export function journalDirIn(stateDir: string): string {
  return path.join(stateDir, "hooks-journal");
}

/** Defaults the lenient view needs when the strict parse failed, read from the schema that declares them. */
const DEFAULT_PATH = v.getDefault(HooksConfigSchema.entries.path);
const DEFAULT_PREFIXES = v.getDefault(HooksConfigSchema.entries.allowedSessionKeyPrefixes);

export interface ResolvedHooksConfig
  extends Omit<HooksConfig, "enabled" | "token" | "transformsDir" | "journal" | "addressRanges"> {
  enabled: boolean;
  token: string;
  /** Absolute, resolved against the config directory. */
  transformsDir: string;
  /** The operator's ranges file, absolute (resolved against the config directory); undefined when unset. */
  addressRanges: string | undefined;
  /** The names `allowFrom` may use beyond proxy-addr's own: the bundled file's, then the operator's. */
  namedRanges: NamedRanges;
  /** Lower-cased, for case-insensitive prefix checks. */
  allowedSessionKeyPrefixes: string[];
  mainSessionKey: string;
  channels: ReadonlySet<string>;
  agents: AgentPolicy;
  models: ModelPolicy;
  journal: ResolvedJournalConfig;
}

export interface ResolveContext {
  /** The config file's directory: relative paths (transformsDir, a secret's `{ file }`) resolve against it. */
  configDir: string;
  /** Where a secret's `{ env }` is read. Default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Where the host lets the plugin keep files; the journal's default home. */
  stateDir?: string | undefined;
  mainSessionKey?: string | undefined;
  channels?: readonly string[] | undefined;
  /** The host's agents; default: one, `main`. */
  agents?: HostAgents | undefined;
  /**
   * The config as edited, not as run (`hooks mailbox setup`): its `${VAR}` are not read yet, so a token that is one
   * is judged when the config runs. Never set for a config that serves.
   */
  variablesUnread?: boolean | undefined;
}

/** `config` is present whenever the shape was valid, so later checks (mappings) can still add their issues. */
export interface ResolveResult {
  config: ResolvedHooksConfig | undefined;
  issues: ConfigIssue[];
  warnings: string[];
  /**
   * The gateway config as given, each secret's `{ file }` or `{ env }` replaced by its text: what a reload
   * compares, so a secret whose file changed is named among the changed fields.
   */
  read: unknown;
}

const KNOWN_KEYS: Record<string, readonly string[]> = {
  hooks: Object.keys(HooksConfigSchema.entries),
  "hooks.mappings": Object.keys(MappingSchema.entries),
  "hooks.mappings.match": Object.keys(MappingMatchSchema.entries),
  "hooks.mappings.transform": Object.keys(MappingTransformSchema.entries),
  "hooks.mappings.verify": Object.keys(MappingVerifySchema.entries),
  "hooks.mappings.response": Object.keys(MappingResponseSchema.entries),
  "hooks.dedupe": Object.keys(DedupeSchema.entries),
  "hooks.authFailures": Object.keys(AuthFailuresSchema.entries),
  "hooks.journal": Object.keys(JournalSchema.entries),
  "hooks.transforms": Object.keys(TransformsSchema.entries),
  "hooks.admission": Object.keys(AdmissionSchema.entries),
  "hooks.store": [...new Set(StoreSchema.options.flatMap((option) => Object.keys(option.entries)))],
  "hooks.mailbox": Object.keys(MailboxConfigSchema.entries),
  ...LIMITS_KEYS,
};
const knownKeysAt = (at: string) => KNOWN_KEYS[at.replace(/\[\d+\]/g, "")];

/** The fields the semantic checks read, taken leniently so they run even when the shape check failed. */
interface SemanticView {
  enabled: boolean;
  token: string | undefined;
  /** The token is there but not text (a `{ file }` that could not be read, a number): its own issue says why. */
  tokenNotText: boolean;
  gatewayToken: string | undefined;
  path: string;
  prefixes: readonly string[];
  defaultSessionKey: string | undefined;
  mappingIds: ReadonlyArray<string | undefined>;
}

const asString = (value: unknown) => (typeof value === "string" ? value : undefined);

function lenientView(raw: unknown): SemanticView {
  const hooks = field(raw, "hooks");
  const prefixes = field(hooks, "allowedSessionKeyPrefixes");
  const mappings = field(hooks, "mappings");
  return {
    enabled: field(hooks, "enabled") === true,
    token: asString(field(hooks, "token")),
    tokenNotText: !["string", "undefined"].includes(typeof field(hooks, "token")),
    gatewayToken: asString(field(field(field(raw, "gateway"), "auth"), "token")),
    path: asString(field(hooks, "path")) ?? DEFAULT_PATH,
    prefixes: Array.isArray(prefixes)
      ? prefixes.filter((p): p is string => typeof p === "string")
      : DEFAULT_PREFIXES,
    defaultSessionKey: asString(field(hooks, "defaultSessionKey")),
    mappingIds: Array.isArray(mappings) ? mappings.map((m) => asString(field(m, "id"))) : [],
  };
}

/** Too short is refused, short is a warning. */
function judgeTokenLength(token: string, issues: ConfigIssue[], warnings: string[]): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    issues.push({
      path: "hooks.token",
      message: `is ${token.length} characters; a hook token needs at least ${MIN_TOKEN_LENGTH} (generate one with "hooks token")`,
    });
  } else if (token.length < WEAK_TOKEN_LENGTH) {
    warnings.push(
      `hooks.token is shorter than ${WEAK_TOKEN_LENGTH} characters; generate a strong one with "hooks token"`,
    );
  }
}

function checkSemantics(
  view: SemanticView,
  mainSessionKey: string,
  variablesUnread = false,
): { issues: ConfigIssue[]; warnings: string[] } {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const token = view.token ?? "";
  if (view.enabled && !view.tokenNotText) {
    if (token.trim() === "") {
      issues.push({ path: "hooks.token", message: "is required when hooks.enabled is true" });
    } else {
      if (token === view.gatewayToken) {
        issues.push({
          path: "hooks.token",
          message: "must differ from gateway.auth.token: the hook token is a dedicated secret",
        });
      }
      if (!(variablesUnread && UNREAD_VARIABLE.test(token))) judgeTokenLength(token, issues, warnings);
    }
  }

  const hooksPath = normalizeHooksPath(view.path);
  if (!hooksPath.ok) issues.push({ path: "hooks.path", message: hooksPath.message });

  const generatedKeysPass =
    view.prefixes.length === 0 || view.prefixes.some((p) => "hook:".startsWith(p.toLowerCase()));
  if (view.defaultSessionKey === undefined && !generatedKeysPass) {
    issues.push({
      path: "hooks.allowedSessionKeyPrefixes",
      message:
        'agent runs that name no session key get "hook:<uuid>", which these prefixes refuse: add "hook:" or set hooks.defaultSessionKey',
    });
  }
  if (view.defaultSessionKey !== undefined) {
    const key = view.defaultSessionKey.toLowerCase();
    const prefixes = view.prefixes.map((prefix) => prefix.toLowerCase());
    if (prefixes.length > 0 && !prefixes.some((prefix) => key.startsWith(prefix))) {
      issues.push({
        path: "hooks.defaultSessionKey",
        message: `must start with one of hooks.allowedSessionKeyPrefixes (${view.prefixes.join(", ")})`,
      });
    }
    if (key === mainSessionKey.toLowerCase()) {
      issues.push({ path: "hooks.defaultSessionKey", message: "must not be the main session's key" });
    }
  }

  const seenIds = new Map<string, number>();
  view.mappingIds.forEach((given, index) => {
    const id = given ?? `mapping-${index}`;
    const earlier = seenIds.get(id);
    if (earlier !== undefined) {
      issues.push({
        path: `hooks.mappings[${index}].id`,
        message: `"${id}" is already used by hooks.mappings[${earlier}]`,
      });
    }
    seenIds.set(id, index);
  });
  return { issues, warnings };
}

export function resolveHooksConfig(given: unknown, context: ResolveContext): ResolveResult {
  const mainSessionKey = context.mainSessionKey ?? "main";
  // Read at each load, before anything looks at the values: from here on a secret is its text.
  const secrets = readSecrets(PluginGatewayConfigSchema, given ?? {}, {
    configDir: context.configDir,
    env: context.env ?? process.env,
  });
  const raw = secrets.value;
  const parsed = v.safeParse(PluginGatewayConfigSchema, raw);
  const semantic = checkSemantics(lenientView(raw), mainSessionKey, context.variablesUnread);
  let output: PluginGatewayConfig;
  let issues = semantic.issues;
  if (parsed.success) {
    output = parsed.output;
  } else {
    issues.unshift(...fromValibotIssues("", parsed.issues, knownKeysAt));
    // A secret that could not be read is listed once, with the reason.
    issues = [...secrets.issues, ...withoutIssuesAt(issues, secrets.issues)];
    // The rest is still checked, so one round shows every problem: each broken field falls back to its
    // default and each broken mapping to an empty one, and what remains goes on to the mapping checks.
    const repaired = v.safeParse(PluginGatewayConfigSchema, withoutBrokenParts(raw, parsed.issues));
    if (!repaired.success) return { config: undefined, issues, warnings: semantic.warnings, read: raw };
    output = repaired.output;
  }

  const hooks = output.hooks ?? v.parse(HooksConfigSchema, {});
  const proxies = checkTrustedProxies(hooks.trustedProxies);
  if (proxies !== undefined) issues.push({ path: "hooks.trustedProxies", message: proxies });
  // Read at each load, as secrets are: a reload picks up a refreshed ranges file.
  const ranges = loadAddressRanges(hooks.addressRanges, context.configDir);
  issues.push(...ranges.issues, ...checkAllowFrom(hooks, ranges.ranges));
  const agents = createAgentPolicy(hooks, context.agents ?? ONE_AGENT);
  for (const id of agents.allowedAgentIds ?? []) {
    if (!agents.agentIds.has(id)) {
      semantic.warnings.push(`hooks.allowedAgentIds names "${id}", which is not an agent here`);
    }
  }
  const hooksPath = normalizeHooksPath(hooks.path);
  return {
    issues,
    warnings: semantic.warnings,
    read: raw,
    config: {
      ...hooks,
      enabled: hooks.enabled === true,
      token: hooks.token ?? "",
      path: hooksPath.ok ? hooksPath.path : DEFAULT_PATH,
      transformsDir: path.resolve(context.configDir, hooks.transformsDir),
      addressRanges: ranges.file,
      namedRanges: ranges.ranges,
      allowedSessionKeyPrefixes: hooks.allowedSessionKeyPrefixes.map((prefix) => prefix.toLowerCase()),
      mainSessionKey,
      channels: new Set(context.channels ?? DEFAULT_CHANNELS),
      agents,
      models: createModelPolicy(output.agents?.defaults?.models),
      journal: { ...hooks.journal, dir: journalDir(hooks.journal, context) },
    },
  };
}

/**
 * A copy of the raw config without the parts the shape check refused: a broken `hooks` field is removed (its
 * default applies), a broken mapping becomes `{}` (so later mappings keep their index), a broken other
 * section is removed.
 */
function withoutBrokenParts(raw: unknown, issues: readonly v.BaseIssue<unknown>[]): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const copy: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  const hooksValue = copy.hooks;
  const hooks =
    hooksValue !== null && typeof hooksValue === "object" && !Array.isArray(hooksValue)
      ? { ...(hooksValue as Record<string, unknown>) }
      : undefined;
  const mappings = Array.isArray(hooks?.mappings) ? [...(hooks.mappings as unknown[])] : undefined;
  for (const issue of issues) {
    const [section, key, index] = (issue.path ?? []).map((item) => item.key as string | number);
    if (section === undefined) continue;
    if (section !== "hooks" || !hooks || key === undefined) {
      delete copy[section];
      continue;
    }
    if (key === "mappings" && mappings && typeof index === "number") {
      const id = field(mappings[index], "id");
      mappings[index] = typeof id === "string" && id !== "" ? { id } : {};
    } else {
      delete hooks[key];
    }
  }
  if (hooks) {
    if (mappings && hooks.mappings !== undefined) hooks.mappings = mappings;
    copy.hooks = hooks;
  }
  return copy;
}

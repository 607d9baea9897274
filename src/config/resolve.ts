/** @module Turns the raw gateway config into the plugin's resolved config, or every problem with its path. */
import path from "node:path";
import * as v from "valibot";
import { CHANNEL_IDS } from "../events.js";
import { MappingMatchSchema, MappingSchema, MappingTransformSchema } from "../mapping/schema.js";
import { normalizeHooksPath } from "./hooks-path.js";
import { type ConfigIssue, fromValibotIssues } from "./issues.js";
import { createModelPolicy, type ModelPolicy } from "./models.js";
import {
  AuthFailuresSchema,
  type HooksConfig,
  HooksConfigSchema,
  MailboxConfigSchema,
  PluginGatewayConfigSchema,
} from "./schema.js";

/** A token shorter than this is accepted but logged as weak. */
export const WEAK_TOKEN_LENGTH = 24;
export const DEFAULT_CHANNELS = CHANNEL_IDS.filter((id) => id !== "mattermost");

export interface ResolvedHooksConfig extends Omit<HooksConfig, "enabled" | "token" | "transformsDir"> {
  enabled: boolean;
  token: string;
  /** Absolute, resolved against the config directory. */
  transformsDir: string;
  /** Lower-cased, for case-insensitive prefix checks. */
  allowedSessionKeyPrefixes: string[];
  mainSessionKey: string;
  channels: ReadonlySet<string>;
  models: ModelPolicy;
}

export interface ResolveContext {
  configDir: string;
  mainSessionKey?: string | undefined;
  channels?: readonly string[] | undefined;
}

/** `config` is present whenever the shape was valid, so later checks (mappings) can still add their issues. */
export interface ResolveResult {
  config: ResolvedHooksConfig | undefined;
  issues: ConfigIssue[];
  warnings: string[];
}

const KNOWN_KEYS: Record<string, readonly string[]> = {
  hooks: Object.keys(HooksConfigSchema.entries),
  "hooks.mappings": Object.keys(MappingSchema.entries),
  "hooks.mappings.match": Object.keys(MappingMatchSchema.entries),
  "hooks.mappings.transform": Object.keys(MappingTransformSchema.entries),
  "hooks.authFailures": Object.keys(AuthFailuresSchema.entries),
  "hooks.mailbox": Object.keys(MailboxConfigSchema.entries),
};
const knownKeysAt = (at: string) => KNOWN_KEYS[at.replace(/\[\d+\]/g, "")];

export function resolveHooksConfig(raw: unknown, context: ResolveContext): ResolveResult {
  const parsed = v.safeParse(PluginGatewayConfigSchema, raw ?? {});
  if (!parsed.success) {
    return { config: undefined, issues: fromValibotIssues("", parsed.issues, knownKeysAt), warnings: [] };
  }

  const hooks = parsed.output.hooks ?? v.parse(HooksConfigSchema, {});
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const enabled = hooks.enabled === true;
  const mainSessionKey = context.mainSessionKey ?? "main";

  const token = hooks.token ?? "";
  if (enabled) {
    if (token.trim() === "") {
      issues.push({ path: "hooks.token", message: "is required when hooks.enabled is true" });
    } else {
      if (token === parsed.output.gateway?.auth?.token) {
        issues.push({
          path: "hooks.token",
          message: "must differ from gateway.auth.token: the hook token is a dedicated secret",
        });
      }
      if (token.length < WEAK_TOKEN_LENGTH) {
        warnings.push(
          `hooks.token is shorter than ${WEAK_TOKEN_LENGTH} characters; generate a strong one with "hooks token"`,
        );
      }
    }
  }

  const hooksPath = normalizeHooksPath(hooks.path);
  if (!hooksPath.ok) issues.push({ path: "hooks.path", message: hooksPath.message });

  const prefixes = hooks.allowedSessionKeyPrefixes.map((prefix) => prefix.toLowerCase());
  if (hooks.defaultSessionKey !== undefined) {
    const key = hooks.defaultSessionKey.toLowerCase();
    if (prefixes.length > 0 && !prefixes.some((prefix) => key.startsWith(prefix))) {
      issues.push({
        path: "hooks.defaultSessionKey",
        message: `must start with one of hooks.allowedSessionKeyPrefixes (${hooks.allowedSessionKeyPrefixes.join(", ")})`,
      });
    }
    if (key === mainSessionKey.toLowerCase()) {
      issues.push({ path: "hooks.defaultSessionKey", message: "must not be the main session's key" });
    }
  }

  const seenIds = new Map<string, number>();
  hooks.mappings.forEach((mapping, index) => {
    const id = mapping.id ?? `mapping-${index}`;
    const earlier = seenIds.get(id);
    if (earlier !== undefined) {
      issues.push({
        path: `hooks.mappings[${index}].id`,
        message: `"${id}" is already used by hooks.mappings[${earlier}]`,
      });
    }
    seenIds.set(id, index);
  });

  const channels = new Set(context.channels ?? DEFAULT_CHANNELS);
  return {
    issues,
    warnings,
    config: {
      ...hooks,
      enabled,
      token,
      path: hooksPath.ok ? hooksPath.path : "/hooks",
      transformsDir: path.resolve(context.configDir, hooks.transformsDir ?? "hooks/transforms"),
      allowedSessionKeyPrefixes: prefixes,
      mainSessionKey,
      channels,
      models: createModelPolicy(parsed.output.agents?.defaults?.models),
    },
  };
}

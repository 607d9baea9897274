/** @module Startup checks of a mapping's fixed fields, so a config mistake stops the start instead of failing every request. */
import * as v from "valibot";
import { TimeoutSecondsSchema } from "../actions/action-schemas.js";
import { resolveSessionKey } from "../actions/session-key.js";
import { resolveAgentId } from "../actions/validate-action.js";
import type { ConfigIssue } from "../config/issues.js";
import type { MappingConfig } from "../config/mapping-schema.js";
import type { ResolvedHooksConfig } from "../config/resolve.js";
import { isHookError } from "../errors.js";
import { checkChannel, ThinkingSchema } from "../vocabulary.js";
import type { CompiledTemplate } from "./template.js";

type Templates = Partial<Record<"sessionKey" | "to" | "model" | "thinking", CompiledTemplate>>;

/** The fixed text of a template with no `{{ }}`, or undefined when it depends on the request. */
function fixedText(template: CompiledTemplate | undefined): string | undefined {
  if (!template || template.dynamic) return undefined;
  const text = template.source.trim();
  return text === "" ? undefined : text;
}

export function checkStaticFields(
  mapping: MappingConfig,
  templates: Templates,
  config: ResolvedHooksConfig,
  configPath: string,
  issues: ConfigIssue[],
): void {
  const timeout = v.safeParse(TimeoutSecondsSchema, mapping.timeoutSeconds);
  if (!timeout.success)
    issues.push({ path: `${configPath}.timeoutSeconds`, message: timeout.issues[0].message });

  const to = fixedText(templates.to);
  const channel = checkChannel(mapping.channel, to, config.channels);
  if (!channel.ok) issues.push({ path: `${configPath}.${channel.field}`, message: channel.message });

  const thinking = fixedText(templates.thinking);
  if (thinking !== undefined && !v.is(ThinkingSchema, thinking)) {
    issues.push({
      path: `${configPath}.thinking`,
      message: "must be off, minimal, low, medium, high or xhigh",
    });
  }
  const model = fixedText(templates.model);
  if (model !== undefined && config.models.resolve(model) === undefined) {
    issues.push({
      path: `${configPath}.model`,
      message: config.models.enforced
        ? `"${model}" is not in agents.defaults.models`
        : `must be a provider/model reference, got "${model}"`,
    });
  }
  if (mapping.agentId !== undefined) {
    try {
      resolveAgentId(config.agents, mapping.agentId, "operator");
    } catch (error) {
      if (!isHookError(error)) throw error;
      issues.push({ path: `${configPath}.agentId`, message: error.message });
    }
  }
  // A persistent mapping continues one conversation per key: with no key it would start a new one every time.
  if (
    mapping.action === "agent" &&
    mapping.sessionMode === "persistent" &&
    templates.sessionKey === undefined &&
    config.defaultSessionKey === undefined
  ) {
    issues.push({
      path: `${configPath}.sessionMode`,
      message: '"persistent" needs a sessionKey in the mapping or hooks.defaultSessionKey',
    });
  }
  const sessionKey = fixedText(templates.sessionKey);
  if (sessionKey !== undefined) {
    try {
      resolveSessionKey(
        {
          allowRequestSessionKey: config.allowRequestSessionKey,
          allowedSessionKeyPrefixes: config.allowedSessionKeyPrefixes,
          defaultSessionKey: config.defaultSessionKey,
          mainSessionKey: config.mainSessionKey,
        },
        sessionKey,
        "operator",
      );
    } catch (error) {
      if (!isHookError(error)) throw error;
      issues.push({ path: `${configPath}.sessionKey`, message: error.message });
    }
  }
}

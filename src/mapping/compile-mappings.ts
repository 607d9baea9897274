/** @module Compiles mappings once at startup: templates parsed, transforms located, presets appended. */
import * as v from "valibot";
import type { ConfigIssue } from "../config/issues.js";
import { type MappingConfig, MappingSchema } from "../config/mapping-schema.js";
import type { ResolvedHooksConfig } from "../config/resolve.js";
import type { ExternalSource } from "../safety/wrap-external.js";
import type { WakeMode } from "../vocabulary.js";
import { checkStaticFields } from "./check-static-fields.js";
import { presetDefinition } from "./presets.js";
import { type CompiledTemplate, compileTemplate } from "./template.js";
import { checkTransformPath } from "./transform-loader.js";

export const TEMPLATE_FIELDS = [
  "name",
  "sessionKey",
  "to",
  "model",
  "thinking",
  "textTemplate",
  "messageTemplate",
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

const RESERVED_NAMES = new Set(["wake", "agent"]);
/** What a URL path may hold unencoded (RFC 3986 pchar and `/`), or percent-encoded bytes. */
const AS_SENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})+$/;

export interface CompiledMapping {
  id: string;
  /** Position in resolution order: user mappings, then presets. */
  order: number;
  /** Where it came from, for messages: `hooks.mappings[2]` or `hooks.presets[0]`. */
  configPath: string;
  matchPath?: string;
  matchSource?: string;
  action: "wake" | "agent";
  wakeMode: WakeMode;
  deliver: boolean;
  channel: string;
  timeoutSeconds: number;
  templates: Partial<Record<TemplateField, CompiledTemplate>>;
  transform?: { module: string; file: string; exportName?: string };
  forEach?: string;
  maxBodyBytes: number;
  allowUnsafe: boolean;
  contentSource: ExternalSource;
  /** Shape the payload must have before anything renders (presets). */
  bodySchema?: v.GenericSchema;
  /** Presets: the key template is the operator's; rendering just this prefix means "no key" (see presets.ts). */
  presetSessionKeyPrefix?: string;
}

export interface CompileResult {
  mappings: CompiledMapping[];
  issues: ConfigIssue[];
}

function compileOne(
  mapping: MappingConfig,
  order: number,
  configPath: string,
  config: ResolvedHooksConfig,
  issues: ConfigIssue[],
): CompiledMapping {
  const compiled: CompiledMapping = {
    id: mapping.id ?? `mapping-${order}`,
    order,
    configPath,
    action: mapping.action,
    wakeMode: mapping.wakeMode,
    deliver: mapping.deliver,
    channel: mapping.channel,
    timeoutSeconds: mapping.timeoutSeconds,
    templates: {},
    maxBodyBytes: mapping.maxBodyBytes ?? config.maxBodyBytes,
    allowUnsafe: mapping.allowUnsafeExternalContent,
    contentSource: "Webhook",
  };
  const matchPath = mapping.match?.path?.replace(/^\/+|\/+$/g, "");
  if (matchPath !== undefined) {
    if (matchPath === "")
      issues.push({ path: `${configPath}.match.path`, message: "must name a hook below hooks.path" });
    if (matchPath !== "" && !AS_SENT.test(matchPath)) {
      issues.push({
        path: `${configPath}.match.path`,
        message:
          "has characters a sender must percent-encode; hook names are matched as sent, so write them encoded (a space as %20)",
      });
    }
    if (RESERVED_NAMES.has(matchPath)) {
      issues.push({
        path: `${configPath}.match.path`,
        message: `"${matchPath}" is reserved for the built-in endpoint`,
      });
    }
    compiled.matchPath = matchPath;
  }
  if (mapping.match?.source !== undefined) compiled.matchSource = mapping.match.source;
  if (mapping.forEach !== undefined) compiled.forEach = mapping.forEach;
  for (const field of TEMPLATE_FIELDS) {
    const source = mapping[field];
    if (source === undefined) continue;
    try {
      compiled.templates[field] = compileTemplate(source);
    } catch (error) {
      issues.push({
        path: `${configPath}.${field}`,
        message: `invalid template: ${(error as Error).message}`,
      });
    }
  }
  checkStaticFields(mapping, compiled.templates, config, configPath, issues);
  if (mapping.transform) {
    const located = checkTransformPath(config.transformsDir, mapping.transform.module);
    if (!located.ok) {
      issues.push({ path: `${configPath}.transform.module`, message: located.message });
    } else {
      compiled.transform = { module: mapping.transform.module, file: located.file };
      if (mapping.transform.export !== undefined) compiled.transform.exportName = mapping.transform.export;
    }
  }
  return compiled;
}

export function compileMappings(config: ResolvedHooksConfig): CompileResult {
  const issues: ConfigIssue[] = [];
  const mappings = config.mappings.map((mapping, index) =>
    compileOne(mapping, index, `hooks.mappings[${index}]`, config, issues),
  );
  config.presets.forEach((name, index) => {
    const preset = presetDefinition(name, config.mailbox);
    const compiled = compileOne(
      v.parse(MappingSchema, preset.mapping),
      mappings.length,
      `hooks.presets[${index}]`,
      config,
      issues,
    );
    compiled.contentSource = preset.contentSource;
    if (preset.bodySchema) compiled.bodySchema = preset.bodySchema;
    if (preset.sessionKeyPrefix !== undefined) compiled.presetSessionKeyPrefix = preset.sessionKeyPrefix;
    mappings.push(compiled);
  });
  return { mappings, issues };
}

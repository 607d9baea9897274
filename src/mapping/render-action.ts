/** @module Renders a mapping's templates for one payload and merges a transform's override into the action body. */
import type { HookActionOverride } from "../actions/action-schemas.js";
import { HookError } from "../errors.js";
import type { CompiledMapping, TemplateField } from "./compile-mappings.js";
import { TEMPLATE_FIELDS } from "./compile-mappings.js";
import type { TemplateContext } from "./template.js";

export type RenderedFields = Partial<Record<TemplateField, string>>;

/** Each template field rendered and trimmed; an empty result means "unset". */
export function renderFields(mapping: CompiledMapping, context: TemplateContext): RenderedFields {
  const out: RenderedFields = {};
  for (const field of TEMPLATE_FIELDS) {
    const template = mapping.templates[field];
    if (template) out[field] = template.render(context).trim();
  }
  if (mapping.presetSessionKeyPrefix !== undefined && out.sessionKey === mapping.presetSessionKeyPrefix) {
    delete out.sessionKey;
  }
  return out;
}

/** The action body a direct request would have sent, built from the mapping and its rendered fields. */
export function templatedBody(mapping: CompiledMapping, rendered: RenderedFields): HookActionOverride {
  if (
    mapping.templates.sessionKey &&
    rendered.sessionKey === "" &&
    mapping.presetSessionKeyPrefix === undefined
  ) {
    throw new HookError(
      "INVALID_PAYLOAD",
      "The mapping's sessionKey template rendered an empty key for this payload.",
      {
        details: [{ path: "sessionKey", message: "rendered empty" }],
      },
    );
  }
  const body: HookActionOverride = {
    kind: mapping.action,
    mode: mapping.wakeMode,
    wakeMode: mapping.wakeMode,
    deliver: mapping.deliver,
    channel: mapping.channel,
    timeoutSeconds: mapping.timeoutSeconds,
    sessionMode: mapping.sessionMode,
  };
  if (mapping.agentId !== undefined) body.agentId = mapping.agentId;
  const set = (
    key: "text" | "message" | "name" | "sessionKey" | "to" | "model",
    value: string | undefined,
  ) => {
    if (value) body[key] = value;
  };
  set("text", rendered.textTemplate);
  set("message", rendered.messageTemplate);
  set("name", rendered.name);
  set("sessionKey", rendered.sessionKey);
  set("to", rendered.to);
  set("model", rendered.model);
  if (rendered.thinking) (body as Record<string, unknown>).thinking = rendered.thinking;
  return body;
}

/** Override fields win; `undefined` fields in the override leave the mapping's value in place. */
export function mergeOverride(base: HookActionOverride, override: HookActionOverride): HookActionOverride {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) if (value !== undefined) merged[key] = value;
  // A wake override may say `wakeMode`; an agent override may say `mode`: the other name follows.
  if (override.wakeMode !== undefined && override.mode === undefined) merged.mode = override.wakeMode;
  if (override.mode !== undefined && override.wakeMode === undefined) merged.wakeMode = override.mode;
  return merged as HookActionOverride;
}

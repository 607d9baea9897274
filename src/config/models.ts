/** @module The model allow-list of `agents.defaults.models`: which overrides are allowed, and alias resolution. */
import type { ModelsConfig } from "./schema.js";

export interface ModelPolicy {
  /** True when the allow-list is present and non-empty. */
  enforced: boolean;
  /** The `provider/model` ref an override stands for, or undefined when it is not allowed. */
  resolve(model: string): string | undefined;
}

const REF_PATTERN = /^[A-Za-z0-9][\w.-]*\/\S+$/;

export function isModelRef(model: string): boolean {
  return REF_PATTERN.test(model);
}

export function createModelPolicy(models: ModelsConfig | undefined): ModelPolicy {
  const refs = new Map<string, string>();
  const aliases = new Map<string, string>();
  if (Array.isArray(models)) {
    for (const ref of models) refs.set(ref.toLowerCase(), ref);
  } else if (models) {
    for (const [ref, entry] of Object.entries(models)) {
      refs.set(ref.toLowerCase(), ref);
      if (entry.alias) aliases.set(entry.alias.toLowerCase(), ref);
    }
  }
  const enforced = refs.size > 0;
  return {
    enforced,
    resolve(model) {
      if (!enforced) return isModelRef(model) ? model : undefined;
      const key = model.toLowerCase();
      return refs.get(key) ?? aliases.get(key);
    },
  };
}

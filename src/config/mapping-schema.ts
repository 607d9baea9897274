/** @module The mapping entry of `hooks.mappings` (SPEC §7): the one declaration of its shape. */
import * as v from "valibot";
import { WakeModeSchema } from "../vocabulary.js";

/** Largest body a mapping may accept for its own path (32 MiB). */
export const MAX_MAPPING_BODY_BYTES = 33_554_432;

const TemplateField = v.optional(v.string());

export const MappingMatchSchema = v.strictObject({
  /** Exact, case-sensitive hook name with outer slashes trimmed (`github/push`). */
  path: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  /** Exact match on the payload's top-level string field `source`. */
  source: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
});

export const MappingTransformSchema = v.strictObject({
  module: v.pipe(v.string(), v.minLength(1, "must name a module inside transformsDir")),
  export: v.optional(v.pipe(v.string(), v.minLength(1))),
});

export const MappingSchema = v.strictObject({
  id: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  match: v.optional(MappingMatchSchema),
  action: v.optional(v.picklist(["wake", "agent"]), "agent"),
  wakeMode: v.optional(WakeModeSchema, "now"),
  name: TemplateField,
  sessionKey: TemplateField,
  to: TemplateField,
  model: TemplateField,
  thinking: TemplateField,
  textTemplate: TemplateField,
  messageTemplate: TemplateField,
  deliver: v.optional(v.boolean(), true),
  channel: v.optional(v.pipe(v.string(), v.minLength(1)), "last"),
  timeoutSeconds: v.optional(v.number(), 600),
  transform: v.optional(MappingTransformSchema),
  forEach: v.optional(v.pipe(v.string(), v.minLength(1))),
  maxBodyBytes: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_MAPPING_BODY_BYTES, "must be at most 33554432 (32 MiB)"),
    ),
  ),
  allowUnsafeExternalContent: v.optional(v.boolean(), false),
});

export type MappingConfig = v.InferOutput<typeof MappingSchema>;
export type MappingInput = v.InferInput<typeof MappingSchema>;

/** @module A secret field's shape: its text, `{ file }` or `{ env }`; the config is read with the last two replaced by their text. */
import * as v from "valibot";

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const SecretFileSchema = v.pipe(
  v.strictObject({
    file: v.pipe(
      v.string("must be a path"),
      v.minLength(1, "must not be empty"),
      v.description(
        "Path of a file holding the secret, relative to the config file's directory; its content, trimmed, is the secret. Refused when others may read or write it.",
      ),
    ),
  }),
  v.description("The secret is the content of this file."),
);

export const SecretEnvSchema = v.pipe(
  v.strictObject({
    env: v.pipe(
      v.string("must be a variable name"),
      v.regex(ENV_NAME, "must be an environment variable name (letters, digits, _)"),
      v.description("Name of the environment variable holding the secret; unset or empty is a config error."),
    ),
  }),
  v.description("The secret is the value of this environment variable."),
);

/** What stands in a secret field before it is read: the secret itself, or where to find it. */
export type SecretRef = v.InferOutput<typeof SecretFileSchema> | v.InferOutput<typeof SecretEnvSchema>;

/**
 * Marks a field as a secret for `readSecrets`, which replaces a `{ file }` or `{ env }` by its text before the
 * config is validated; so the schema's output is always the text, and nothing after the load sees the other forms.
 * One still here was not read: `readSecrets` has reported why (or was not called, a programmer's error).
 */
export const SECRET_READ = v.rawTransform<string | SecretRef, string>(({ dataset, addIssue, NEVER }) => {
  if (typeof dataset.value === "string") return dataset.value;
  addIssue({ message: "was not read: its file or variable could not be used" });
  return NEVER;
});

/** A secret field: `text` (the secret's own rules: not empty, a URL…), `{ "file": "<path>" }` or `{ "env": "NAME" }`. */
export function secretField<TText extends v.GenericSchema<string, string>>(text: TText) {
  return v.pipe(
    v.union(
      [text, SecretFileSchema, SecretEnvSchema],
      'must be a string, { "file": "<path>" } or { "env": "NAME" }',
    ),
    SECRET_READ,
  );
}

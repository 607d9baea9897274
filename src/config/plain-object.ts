/** @module Reading values of unknown shape (a config before it is validated, a JSON answer): a plain object, one of its fields. */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `value[key]` when `value` is an object, else undefined: for reading a config leniently, even a malformed one. */
export function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

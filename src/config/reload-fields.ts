/** @module What a reload changes: the plugin's fields that changed, and those a running plugin was built on (route, store, journal, transform pool), which keep their running values. */
import { isDeepStrictEqual } from "node:util";
import { field } from "./plain-object.js";
import type { ResolvedHooksConfig } from "./resolve.js";

/**
 * What each is read by: the route the host registered (`enabled`, `path`), the store and the journal opened at
 * start (`store`, `dedupe`, the journal's file settings), the transform pool (`transformsDir`, `transforms`).
 * `journal.storePayloads` is read per request: it changes live.
 */
const RESTART_FIELDS = ["enabled", "path", "store", "dedupe", "transformsDir", "transforms"] as const;
const RESTART_JOURNAL_FIELDS = [
  "enabled",
  "dir",
  "fsync",
  "retainHours",
  "refusedPerMinute",
  "refusedTotalPerMinute",
  "refusedBytesPerMinute",
] as const;

export interface KeptFields {
  /** `next` with the running values of the fields that need a restart. */
  config: ResolvedHooksConfig;
  /** Those of them whose value `next` changed, as `hooks.store`, `hooks.journal.dir`. */
  restartNeeded: string[];
}

/** Takes `next` as the config to run, except for the fields a restart must apply, which keep `running`'s values. */
export function keepRestartFields(running: ResolvedHooksConfig, next: ResolvedHooksConfig): KeptFields {
  const restartNeeded: string[] = [];
  const config = { ...next, journal: { ...next.journal } };
  for (const key of RESTART_FIELDS) {
    if (isDeepStrictEqual(running[key], next[key])) continue;
    restartNeeded.push(`hooks.${key}`);
    Object.assign(config, { [key]: running[key] });
  }
  for (const key of RESTART_JOURNAL_FIELDS) {
    if (isDeepStrictEqual(running.journal[key], next.journal[key])) continue;
    restartNeeded.push(`hooks.journal.${key}`);
    Object.assign(config.journal, { [key]: running.journal[key] });
  }
  return { config, restartNeeded };
}

/** The plugin's fields outside `hooks` (checked against the hook token, the model allow-list). */
const OUTSIDE_HOOKS = [
  ["gateway", "auth", "token"],
  ["agents", "defaults", "models"],
] as const;

/** The keys of two objects whose values differ, named under `at`. */
function changedKeys(was: unknown, is: unknown, at: string): string[] {
  const keys = new Set([...Object.keys((was ?? {}) as object), ...Object.keys((is ?? {}) as object)]);
  return [...keys]
    .filter((key) => !isDeepStrictEqual(field(was, key), field(is, key)))
    .map((key) => `${at}.${key}`);
}

/**
 * The fields of the plugin's slice whose raw value differs between two gateway configs, by name only
 * (`hooks.token`, `hooks.mappings`): what a reload log line may say about a change without showing a value. The
 * journal's are named one by one, since some of them need a restart and one does not.
 */
export function changedFields(before: unknown, after: unknown): string[] {
  const was = field(before, "hooks");
  const is = field(after, "hooks");
  const changed = changedKeys(was, is, "hooks").flatMap((name) =>
    name === "hooks.journal" ? changedKeys(field(was, "journal"), field(is, "journal"), name) : [name],
  );
  for (const at of OUTSIDE_HOOKS) {
    const read = (config: unknown) => at.reduce<unknown>((object, key) => field(object, key), config);
    if (!isDeepStrictEqual(read(before), read(after))) changed.push(at.join("."));
  }
  return changed;
}

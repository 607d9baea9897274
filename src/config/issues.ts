/** @module Config problems: collected with their paths and reported all at once. */
import type * as v from "valibot";
import { suggestClosest } from "./did-you-mean.js";

export interface ConfigIssue {
  /** Dotted path into the gateway config, e.g. `hooks.mappings[2].transform.module`. */
  path: string;
  message: string;
  /** Set when the problem is that this environment variable, which the field's `${NAME}` reads, is not set. */
  variable?: string;
  /** What to do about it, printed after the message in parentheses. */
  hint?: string;
  /**
   * Set on a problem found in the file's text before `${VAR}` substitution (a secret's variable where it may not
   * stand): it holds whatever value the variable gets, so an unset variable does not make it moot.
   */
  inText?: true;
}

const CONFIG_ERROR = Symbol.for("hooks-intake.config-error");

/** Thrown at startup when the config cannot be used; lists every problem found. */
export class ConfigError extends Error {
  readonly [CONFIG_ERROR] = true;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(`invalid config:\n${issues.map((i) => `  - ${formatIssue(i)}`).join("\n")}`);
    this.name = "ConfigError";
    this.issues = issues;
  }
}

/** Marker check rather than instanceof: jiti can load a second copy of this module. */
export function isConfigError(error: unknown): error is ConfigError {
  return typeof error === "object" && error !== null && CONFIG_ERROR in error;
}

export function formatIssue(issue: ConfigIssue): string {
  const message = issue.hint === undefined ? issue.message : `${issue.message} (${issue.hint})`;
  return issue.path ? `${issue.path}: ${message}` : message;
}

/**
 * `issues` without those at a path where a secret could not be read (`unread`): what it says of the `{ file }` or
 * `{ env }` left in its place ("must be a string", "is required") is already said by the reason it was not read.
 */
export function withoutIssuesAt(
  issues: readonly ConfigIssue[],
  unread: readonly ConfigIssue[],
): ConfigIssue[] {
  if (unread.length === 0) return [...issues];
  const at = new Set(unread.map((issue) => issue.path));
  return issues.filter((issue) => !at.has(issue.path));
}

/** Appends path segments the way a person writes them: `a.b[2].c`. */
export function joinPath(base: string, ...segments: readonly (string | number)[]): string {
  let out = base;
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

/** Turns valibot issues into config issues under `base`, with "did you mean" hints for unknown keys. */
export function fromValibotIssues(
  base: string,
  issues: readonly v.BaseIssue<unknown>[],
  knownKeysAt: (path: string) => readonly string[] | undefined,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const segments = (issue.path ?? []).map((item) => item.key as string | number);
    const path = joinPath(base, ...segments);
    // An unknown key is reported by strict objects as a value that should have been `never`; a strict object
    // given as another type (`verify: "…"`) is a plain type error.
    if (issue.type === "strict_object" && issue.expected === "never" && segments.length > 0) {
      const key = String(segments[segments.length - 1]);
      const parent = joinPath(base, ...segments.slice(0, -1));
      const hint = suggestClosest(key, knownKeysAt(parent) ?? []);
      out.push({ path, message: `unknown key${hint ? ` (did you mean "${hint}"?)` : ""}` });
      continue;
    }
    out.push({ path, message: describeIssue(issue, SECRET_PATH.test(path)) });
  }
  return out;
}

/** Where a secret may sit: its value must never be quoted back, even when it has the wrong type. */
const SECRET_PATH =
  /(?:^|\.)(?:token|metricsToken|key|url|verify(?:\.[^.]*)?)(?:\[\d+\])?$|\.verify\.secrets\[\d+\]$/;

function describeIssue(issue: v.BaseIssue<unknown>, secret: boolean): string {
  // valibot's default messages start with "Invalid type: Expected ..."; keep them but lower-case the start.
  let message = issue.message;
  // Its defaults end with `but received "<the value>"`: a secret given the wrong shape must not be printed.
  if (secret) message = message.replace(/\s*but received .*$/s, "");
  return message.charAt(0).toLowerCase() + message.slice(1);
}

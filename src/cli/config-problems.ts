/** @module The config problems `hooks check` lists: one per unset variable naming every field that uses it, none about a placeholder's text. */
import type { ConfigIssue } from "../config/issues.js";

export interface ConfigProblems {
  /** What to list, in the order found. */
  issues: ConfigIssue[];
  warnings: string[];
  /** The unfolded issues that still stand, for telling which mappings are invalid. */
  standing: ConfigIssue[];
}

/**
 * Folds the "environment variable X is not set" issues into one per variable, listing every field that uses it,
 * and drops the problems and warnings about a field whose variable is not set: the check saw the `${X}` text where
 * a value would be (a signing secret "must be whsec_…", a token "shorter than 24 characters"), which says nothing
 * about the value the user will set.
 */
export function foldConfigProblems(
  issues: readonly ConfigIssue[],
  warnings: readonly string[],
): ConfigProblems {
  const unset = new Map<string, ConfigIssue[]>();
  for (const issue of issues) {
    if (issue.variable === undefined) continue;
    unset.set(issue.variable, [...(unset.get(issue.variable) ?? []), issue]);
  }
  const placeholderAt = new Set([...unset.values()].flat().map((issue) => issue.path));
  const standing = issues.filter(
    (issue) => issue.variable !== undefined || issue.inText || !placeholderAt.has(issue.path),
  );
  const listed: ConfigIssue[] = [];
  const done = new Set<string>();
  for (const issue of standing) {
    const { variable } = issue;
    if (variable === undefined) {
      listed.push(issue);
      continue;
    }
    if (done.has(variable)) continue;
    done.add(variable);
    const uses = unset.get(variable)!;
    listed.push({ ...issue, path: uses.map((use) => use.path).join(", ") });
  }
  return {
    issues: listed,
    // Warnings are plain text that starts with the field's path (the plugin's warning type is a string).
    warnings: warnings.filter((warning) => ![...placeholderAt].some((at) => warning.startsWith(`${at} `))),
    standing,
  };
}

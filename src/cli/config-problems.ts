/** @module The config problems `hooks check` lists: one per unset variable naming every field that uses it, none about a placeholder's text. */
import type { ConfigIssue } from "../config/issues.js";

const UNSET = /^environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set(?: \((.*)\))?$/s;
/** A problem about the `${VAR}` in the config text itself (a secret's variable in rendered text) names it. */
const NAMES_A_PLACEHOLDER = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

export interface ConfigProblems {
  /** What to list, in the order found. */
  issues: ConfigIssue[];
  warnings: string[];
  /** The unfolded issues that still stand, for telling which mappings are invalid. */
  standing: ConfigIssue[];
}

interface Unset {
  variable: string;
  paths: string[];
  hint: string | undefined;
}

/** The variable an issue says is not set, if that is what it says. */
export function unsetVariableOf(issue: ConfigIssue): string | undefined {
  return UNSET.exec(issue.message)?.[1];
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
  const unset = new Map<string, Unset>();
  const placeholderAt = new Set<string>();
  for (const issue of issues) {
    const match = UNSET.exec(issue.message);
    if (!match) continue;
    const variable = match[1]!;
    placeholderAt.add(issue.path);
    const entry = unset.get(variable) ?? { variable, paths: [], hint: match[2] };
    entry.paths.push(issue.path);
    unset.set(variable, entry);
  }
  const standing = issues.filter(
    (issue) =>
      UNSET.test(issue.message) || !placeholderAt.has(issue.path) || NAMES_A_PLACEHOLDER.test(issue.message),
  );
  const listed: ConfigIssue[] = [];
  const done = new Set<string>();
  for (const issue of standing) {
    const variable = unsetVariableOf(issue);
    if (variable === undefined) {
      listed.push(issue);
      continue;
    }
    if (done.has(variable)) continue;
    done.add(variable);
    const { paths, hint } = unset.get(variable)!;
    listed.push({
      path: paths.join(", "),
      message: `environment variable ${variable} is not set${hint === undefined ? "" : ` (${hint})`}`,
    });
  }
  return {
    issues: listed,
    warnings: warnings.filter((warning) => ![...placeholderAt].some((at) => warning.startsWith(`${at} `))),
    standing,
  };
}

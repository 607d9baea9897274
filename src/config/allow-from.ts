/** @module The `allowFrom` lists of a config: every entry checked with its path (an address, a CIDR range or a known name), and a list expanded to what proxy-addr compiles. */
import { addressProblem, BUILTIN_RANGE_NAMES, type NamedRanges, RANGE_NAME } from "./address-ranges.js";
import { suggestClosest } from "./did-you-mean.js";
import type { ConfigIssue } from "./issues.js";

/** Where a config declares allow-lists: the fields `checkAllowFrom` reads. */
export interface AllowFromSources {
  limits: {
    default: { allowFrom?: readonly string[] | undefined };
    wake?: { allowFrom?: readonly string[] | undefined } | undefined;
    agent?: { allowFrom?: readonly string[] | undefined } | undefined;
  };
  mappings: ReadonlyArray<{ allowFrom?: readonly string[] | undefined }>;
}

/** Each allow-list of the config with its path (`hooks.mappings[2].allowFrom`), those that are set. */
export function allowListsOf(hooks: AllowFromSources): Array<{ path: string; list: readonly string[] }> {
  const lists: Array<{ path: string; list: readonly string[] | undefined }> = [
    { path: "hooks.limits.default.allowFrom", list: hooks.limits.default.allowFrom },
    { path: "hooks.limits.wake.allowFrom", list: hooks.limits.wake?.allowFrom },
    { path: "hooks.limits.agent.allowFrom", list: hooks.limits.agent?.allowFrom },
    ...hooks.mappings.map((mapping, index) => ({
      path: `hooks.mappings[${index}].allowFrom`,
      list: mapping.allowFrom,
    })),
  ];
  return lists.flatMap(({ path, list }) => (list === undefined ? [] : [{ path, list }]));
}

/** Every entry of every allow-list that is neither an address, a CIDR range nor a known name, at its path. */
export function checkAllowFrom(hooks: AllowFromSources, named: NamedRanges): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const names = [...BUILTIN_RANGE_NAMES, ...named.keys()];
  for (const { path, list } of allowListsOf(hooks)) {
    list.forEach((entry, index) => {
      const at = `${path}[${index}]`;
      if (RANGE_NAME.test(entry)) {
        if (names.includes(entry)) return;
        const close = suggestClosest(entry, names);
        issues.push({
          path: at,
          message: `unknown range "${entry}"`,
          hint: close === undefined ? `known names: ${names.join(", ")}` : `did you mean "${close}"?`,
        });
        return;
      }
      const problem = addressProblem(entry);
      if (problem !== undefined) {
        issues.push({
          path: at,
          message: `"${entry}" is not an address, a CIDR range or a range name: ${problem}`,
        });
      }
    });
  }
  return issues;
}

/**
 * `list` as proxy-addr compiles it: a name from the ranges files replaced by its ranges, proxy-addr's own names,
 * addresses and CIDR ranges as they are. Assumes a checked list (an unknown name is left for proxy-addr to refuse).
 */
export function expandAllowFrom(list: readonly string[], named: NamedRanges): string[] {
  return list.flatMap((entry) => named.get(entry)?.ranges ?? [entry]);
}

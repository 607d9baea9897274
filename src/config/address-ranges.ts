/** @module Named address ranges for `allowFrom`: proxy-addr's own names, the bundled file (GitHub's webhook sources) and an operator's `hooks.addressRanges` file, read and checked entry by entry. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import proxyAddr from "proxy-addr";
import * as v from "valibot";
import type { ConfigIssue } from "./issues.js";

/** The names proxy-addr expands itself (as `hooks.trustedProxies` takes them): a ranges file may not redefine them. */
export const BUILTIN_RANGE_NAMES: readonly string[] = ["loopback", "linklocal", "uniquelocal"];

/**
 * The bundled ranges file: `assets/` at the package root, two levels above this module in `src/` and in `dist/`.
 * It changes only with a release; `hooks.addressRanges` is how an operator follows a sender's newer list sooner.
 */
export const BUNDLED_RANGES_FILE = fileURLToPath(
  new URL("../../assets/address-ranges.json", import.meta.url),
);

/**
 * What a name may look like: no `.`, `:` or `/`, so no name can be read as an address or a CIDR range, and an entry
 * of `allowFrom` is one or the other by its characters alone.
 */
export const RANGE_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** One named range as a ranges file defines it. */
export interface NamedRange {
  /** Addresses and CIDR ranges, each checked by proxy-addr. */
  ranges: readonly string[];
  /** Where the file says its ranges came from, and when (`source`, `retrieved`), when it says. */
  source: string | undefined;
  retrieved: string | undefined;
  /** The file that defines it (absolute). */
  file: string;
}

/** Every name `allowFrom` may use beyond proxy-addr's own, by name. */
export type NamedRanges = ReadonlyMap<string, NamedRange>;

const RangeList = v.array(v.string("must be a string"), "must be a list of addresses and CIDR ranges");
const RangesFileSchema = v.record(
  v.string(),
  v.union(
    [
      RangeList,
      v.looseObject({
        ranges: RangeList,
        source: v.optional(v.string("must be a string")),
        retrieved: v.optional(v.string("must be a string")),
      }),
    ],
    "must be a list of ranges, or { ranges, source?, retrieved? }",
  ),
  "must be an object of range names",
);

/** The ranges a file defines, or why it cannot be used; every problem is a message naming the file's entry. */
export function parseRangesFile(
  text: string,
  file: string,
): { ranges: Map<string, NamedRange>; problems: string[] } {
  const ranges = new Map<string, NamedRange>();
  const problems: string[] = [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ranges, problems: [`is not valid JSON: ${(error as Error).message}`] };
  }
  const parsed = v.safeParse(RangesFileSchema, json);
  if (!parsed.success) {
    for (const issue of parsed.issues) {
      const at = (issue.path ?? []).map((item) =>
        typeof item.key === "number" ? `[${item.key}]` : `.${String(item.key)}`,
      );
      problems.push(`${at.join("").replace(/^\./, "") || "the file"}: ${issue.message}`);
    }
    return { ranges, problems };
  }
  for (const [name, value] of Object.entries(parsed.output)) {
    if (!RANGE_NAME.test(name)) {
      problems.push(`"${name}": a range name is letters, digits, "-" and "_", starting with a letter`);
      continue;
    }
    if (BUILTIN_RANGE_NAMES.includes(name)) {
      problems.push(`"${name}" is proxy-addr's own name and cannot be redefined`);
      continue;
    }
    const entry = Array.isArray(value) ? { ranges: value } : value;
    if (entry.ranges.length === 0) {
      problems.push(`${name}.ranges: must list at least one address or range`);
      continue;
    }
    const bad = entry.ranges.flatMap((range, index) => {
      const problem = addressProblem(range);
      return problem === undefined ? [] : [`${name}.ranges[${index}]: ${problem}`];
    });
    if (bad.length > 0) {
      problems.push(...bad);
      continue;
    }
    ranges.set(name, {
      ranges: [...entry.ranges],
      source: "source" in entry ? entry.source : undefined,
      retrieved: "retrieved" in entry ? entry.retrieved : undefined,
      file,
    });
  }
  return { ranges, problems };
}

/** Why `entry` is not an address or a CIDR range proxy-addr takes, or undefined when it is one. */
export function addressProblem(entry: string): string | undefined {
  if (RANGE_NAME.test(entry)) return `"${entry}" is a name, not an address or a CIDR range`;
  try {
    proxyAddr.compile([entry]);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The named ranges in force: the bundled file's, then `file`'s (relative to `configDir`), whose names replace bundled
 * ones of the same name. A problem with the operator's file is an issue at `hooks.addressRanges`; the bundled file
 * is part of the package, so a problem with it is a fault of the package and throws.
 */
export function loadAddressRanges(
  file: string | undefined,
  configDir: string,
  bundled: string = BUNDLED_RANGES_FILE,
): { ranges: Map<string, NamedRange>; file: string | undefined; issues: ConfigIssue[] } {
  const own = parseRangesFile(readFileSync(bundled, "utf8"), bundled);
  if (own.problems.length > 0) throw new Error(`${bundled}: ${own.problems.join("; ")}`);
  const ranges = own.ranges;
  if (file === undefined) return { ranges, file: undefined, issues: [] };
  const absolute = path.resolve(configDir, file);
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (error as Error).message;
    return {
      ranges,
      file: absolute,
      issues: [{ path: "hooks.addressRanges", message: `cannot read ${absolute}: ${why}` }],
    };
  }
  const theirs = parseRangesFile(text, absolute);
  for (const [name, range] of theirs.ranges) ranges.set(name, range);
  return {
    ranges,
    file: absolute,
    issues: theirs.problems.map((problem) => ({
      path: "hooks.addressRanges",
      message: `${absolute}: ${problem}`,
    })),
  };
}

/** @module `${VAR}` substitution in config strings; a missing variable is a config error naming it. */
import { type ConfigIssue, joinPath } from "./issues.js";

const VAR_PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Returns a copy of `value` with `${VAR}` replaced in every string, and an issue per missing variable.
 * `$${` stands for a literal `${`.
 */
export function substituteEnvVars(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path = "",
): { value: unknown; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const walk = (node: unknown, at: string): unknown => {
    if (typeof node === "string") {
      if (!node.includes("${")) return node;
      return node.replace(VAR_PATTERN, (match, name: string | undefined) => {
        if (name === undefined) return "${";
        const found = env[name];
        if (found === undefined) {
          issues.push({ path: at, message: `environment variable ${name} is not set`, variable: name });
          return match;
        }
        return found;
      });
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, joinPath(at, i)));
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child, joinPath(at, key));
      return out;
    }
    return node;
  };
  return { value: walk(value, path), issues };
}

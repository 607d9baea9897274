/** @module How a hint should spell the `hooks` command so that it works where the user is: on PATH, through npx, or by its path. */
import { accessSync, constants, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "./endpoints.js";

/** src/gateway and dist/gateway are both two levels below the package root. */
const PACKAGE_ROOT = path.resolve(fileURLToPath(new URL("../../", import.meta.url)));
const HOOKS_BIN = path.join(PACKAGE_ROOT, "bin/hooks.js");

/** Where `npx hooks` finds this CLI: in its own checkout, and in a project that has it in its node_modules. */
const INSTALLED_AT = PACKAGE_ROOT.lastIndexOf(`${path.sep}node_modules${path.sep}`);
const NPX_FINDS_IT =
  INSTALLED_AT === -1 ? [PACKAGE_ROOT] : [PACKAGE_ROOT, PACKAGE_ROOT.slice(0, INSTALLED_AT)];

function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return !relative.startsWith("..") && !path.isAbsolute(relative);
}

function realpathOf(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** Whether the `hooks` a shell would find on PATH is this package's (a global install, or a linked checkout). */
function onPath(pathVariable: string | undefined): boolean {
  const own = realpathOf(HOOKS_BIN);
  for (const dir of (pathVariable ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, "hooks");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    // The first `hooks` on PATH is the one a shell runs: another program's is no use.
    return own !== undefined && realpathOf(candidate) === own;
  }
  return false;
}

/**
 * The command to print in a hint: `hooks` when that is this CLI on PATH; `npx hooks` when npm ran it (npx, an npm
 * script: npm's PATH is not the user's shell's) or the user is inside this package's checkout, where npx finds its
 * bin; otherwise `node` and the script's path, which works from anywhere.
 */
export function hooksCommand(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  if (env.npm_command !== undefined || env.npm_lifecycle_event !== undefined) return "npx hooks";
  if (onPath(env.PATH)) return "hooks";
  if (NPX_FINDS_IT.some((root) => isInside(cwd, root))) return "npx hooks";
  const relative = path.relative(cwd, HOOKS_BIN);
  return `node ${shellQuote(relative.startsWith("..") ? HOOKS_BIN : relative)}`;
}

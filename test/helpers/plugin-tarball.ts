/** @module Packs the checkout as users get it, `npm pack` (which builds dist/ first), once per test process. */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./repo.js";

const run = promisify(execFile);
let packed: Promise<{ tarball: string; dir: string }> | undefined;

/** The path of `hooks-intake-<version>.tgz` in a temp dir of its own; `removePluginTarball()` deletes it. */
export async function pluginTarball(): Promise<string> {
  packed ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "hooks-pack-"));
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: REPO_ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    // The build's own output goes to stderr; the JSON report is what stdout holds from its first bracket.
    const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ filename: string }];
    return { tarball: path.join(dir, filename), dir };
  })();
  return (await packed).tarball;
}

export async function removePluginTarball(): Promise<void> {
  if (packed === undefined) return;
  const { dir } = await packed.catch(() => ({ dir: undefined }));
  packed = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}

/** @module Builds dist/ with tsc when it is older than src/ (or missing), for the tests that spawn the real CLI; a dist/ newer than every source is left as it is. */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Besides src/, what the emitted JavaScript depends on. */
const CONFIGS = ["tsconfig.json", "tsconfig.build.json", "package.json"];

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Whether dist/ holds a build of the current src/: every source file has its .js, and the oldest of them is newer
 * than the newest input. tsc rewrites every output on each build, so one input edited after it shows; a per-file
 * comparison would not do, as a file's declaration (.d.ts) can change with another file's types.
 */
export function distUpToDate(root = ROOT) {
  const sources = filesUnder(path.join(root, "src"));
  let newestInput = 0;
  for (const file of [...sources, ...CONFIGS.map((name) => path.join(root, name))]) {
    if (existsSync(file)) newestInput = Math.max(newestInput, statSync(file).mtimeMs);
  }
  for (const source of sources) {
    if (!source.endsWith(".ts") || source.endsWith(".d.ts")) continue;
    const output = path
      .join(root, "dist", path.relative(path.join(root, "src"), source))
      .replace(/\.ts$/, ".js");
    if (!existsSync(output) || statSync(output).mtimeMs < newestInput) return false;
  }
  return true;
}

/**
 * Builds dist/ unless it is up to date; returns what it did. Type errors are the typecheck step's to report: tsc
 * still emits, which is all the CLI tests need, so its exit code is not an error here.
 */
export function buildDist(root = ROOT) {
  if (distUpToDate(root)) return { built: false, ms: 0 };
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    { cwd: root, encoding: "utf8" },
  );
  if (result.error) throw result.error;
  return { built: true, ms: Date.now() - started, output: `${result.stdout}${result.stderr}` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { built, ms } = buildDist();
  process.stdout.write(built ? `dist built in ${(ms / 1000).toFixed(1)} s\n` : "dist up to date\n");
}

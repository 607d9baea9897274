/** @module Builds dist/ once before the suite, so tests that spawn the real CLI run the current code; after the run, says which suites were skipped for want of a server. */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { skippedServersLine } from "./helpers/test-servers.js";

export default function setup(): () => void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  // Type errors are the typecheck step's to report; tsc still emits, which is all the CLI tests need.
  const result = spawnSync(
    process.execPath,
    [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    { cwd: root, encoding: "utf8" },
  );
  if (result.error) throw result.error;
  // A skipped suite shows only as a few "skipped" among hundreds of tests: one line at the end says why.
  const skipped = skippedServersLine();
  return () => {
    if (skipped !== undefined) process.stdout.write(`\n${skipped}\n`);
  };
}

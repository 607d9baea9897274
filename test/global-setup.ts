/** @module Builds dist/ before the suite when src/ changed since the last build, so tests that spawn the real CLI run the current code; after the run, says which suites were skipped for want of a server. */
import { buildDist } from "../scripts/build-dist.mjs";
import { skippedServersLine } from "./helpers/test-servers.js";

export default function setup(): () => void {
  // A rebuild of an unchanged src/ cost about 7 s of CPU on every run; `npm test` builds before vitest starts.
  buildDist();
  // A skipped suite shows only as a few "skipped" among hundreds of tests: one line at the end says why.
  const skipped = skippedServersLine();
  return () => {
    if (skipped !== undefined) process.stdout.write(`\n${skipped}\n`);
  };
}

// Test runner settings for `npm test`: everything but the OpenClaw end-to-end files, which `npm run test:e2e` runs.
import { createHash } from "node:crypto";
import os, { availableParallelism } from "node:os";
import path from "node:path";
import { configDefaults, defineConfig, type ViteUserConfig } from "vitest/config";

/** Run the real OpenClaw gateway (minutes on a first run): `npm run test:e2e`, after `npm test` in CI. */
export const OPENCLAW_E2E = "test/openclaw/*-e2e.test.ts";

/** Shared by both configs: real servers and child processes need a little more time than pure unit tests. */
export const shared: NonNullable<ViteUserConfig["test"]> = {
  globalSetup: ["test/global-setup.ts"],
  // A backstop for a test that hangs, not a measure of speed: every wait in a test has its own deadline. Tests that
  // take 5 s on 2 idle cores took over 20 s beside a full run and other CPU-bound jobs.
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks",
};

export default defineConfig({
  test: {
    ...shared,
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, OPENCLAW_E2E],
    // Most files wait on servers, sockets and child processes more than they compute: one worker more than the
    // cores keeps them busy while a file waits (on 2 cores, the suite's CPU over its wall time went from 1.2 to 1.8).
    maxWorkers: availableParallelism() + 1,
    // One worker process per core for the whole run, its modules loaded once: a fresh process per file spent about
    // half the suite's CPU starting node and loading the same modules again. Files clean up after themselves
    // (cleanupCli, servers closed in afterAll), so one file's state does not reach the next.
    isolate: false,
    // Transformed modules kept between runs, keyed by their content: vitest spent about 15 s of CPU transforming the
    // same files each run. Not in node_modules: a git worktree may share that with other checkouts (a symlink).
    experimental: {
      fsModuleCache: true,
      fsModuleCachePath: path.join(
        os.tmpdir(),
        `hooks-intake-vitest-${createHash("sha256")
          .update(import.meta.dirname)
          .digest("hex")
          .slice(0, 12)}`,
      ),
    },
  },
});

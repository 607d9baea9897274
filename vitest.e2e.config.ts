// Test runner settings for `npm run test:e2e`: the plugin inside the real OpenClaw gateway, on its own.
import { defineConfig } from "vitest/config";
import { OPENCLAW_E2E, shared } from "./vitest.config.js";

export default defineConfig({
  test: {
    ...shared,
    include: [OPENCLAW_E2E],
    // Each file runs its own OpenClaw (about 700 MB, both cores to start): one at a time.
    fileParallelism: false,
  },
});

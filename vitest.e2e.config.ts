// Test runner settings for `npm run test:e2e`: the plugin inside the real OpenClaw gateway, on its own.
import { defineConfig } from "vitest/config";
import { OPENCLAW_E2E, shared } from "./vitest.config.js";

export default defineConfig({
  test: {
    ...shared,
    include: [OPENCLAW_E2E],
    // One OpenClaw at a time: each takes about 700 MB and both cores of a 2-core machine while it starts.
    fileParallelism: false,
  },
});

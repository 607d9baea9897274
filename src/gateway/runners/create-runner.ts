/** @module Picks the agent runner the config names. */
import type { RunnerConfig } from "../gateway-config.js";
import { createCommandRunner } from "./command.js";
import { createEchoRunner } from "./echo.js";
import { createOpenAiRunner } from "./openai.js";
import type { AgentRunner } from "./runner-types.js";

export function createRunner(
  config: RunnerConfig,
  configDir: string,
  env: NodeJS.ProcessEnv = process.env,
): AgentRunner {
  switch (config.kind) {
    case "echo":
      return createEchoRunner();
    case "command":
      return createCommandRunner(config, configDir, env);
    case "openai":
      return createOpenAiRunner(config, env);
  }
}

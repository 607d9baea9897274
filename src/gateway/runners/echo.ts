/** @module The `echo` runner: replies with the turn's raw text; deterministic, for development and tests. */
import type { AgentRunner } from "./runner-types.js";

export function createEchoRunner(): AgentRunner {
  return {
    kind: "echo",
    async run({ turn }) {
      return { reply: turn.raw };
    },
  };
}

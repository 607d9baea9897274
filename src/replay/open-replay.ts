/** @module Loads the gateway config the way `serve` does and opens a replay pipeline on it, for `replay` and `test`. */
import { formatIssue } from "../config/issues.js";
import { type LoadedGatewayConfig, loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { ReplayPipeline } from "./replay-fixture.js";

export interface OpenedReplay {
  config: LoadedGatewayConfig;
  pipeline: ReplayPipeline;
}

/** Throws with every config problem listed; replay refuses to guess around a broken config. */
export function openReplay(configFlag: string | undefined): OpenedReplay {
  // Replay never authenticates, so the demo's token placeholder may stay unset without a fresh token being printed.
  const config = loadGatewayConfig({ config: configFlag });
  const prepared = config.hooks.prepared;
  if (config.issues.length > 0 || !prepared) {
    throw new Error(
      `invalid config ${config.file}:\n${config.issues.map((issue) => `  - ${formatIssue(issue)}`).join("\n")}`,
    );
  }
  const pipeline = new ReplayPipeline(prepared, {
    runDeadlineGraceMs: 0,
    transformTimeoutMs: 5_000,
    transformReloadCheckMs: 0,
  });
  return { config, pipeline };
}

/** @module Loads the gateway config the way `serve` does and opens a replay pipeline on it, for `replay` and `test`. */
import { type LoadedGatewayConfig, loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { withStandIns } from "../gateway/stand-ins.js";
import { type ConfigError, configuredAgents, formatIssue, isConfigError } from "../index.js";
import { openReplayPipeline, type ReplayPipeline } from "../replay/replay-fixture.js";

export interface OpenedReplay {
  config: LoadedGatewayConfig;
  pipeline: ReplayPipeline;
  /** Environment variables the config names that are not set, replaced by random stand-ins. */
  standIns: string[];
}

/** Throws with every config problem listed; replay refuses to guess around a broken config. */
export function openReplay(configFlag: string | undefined): OpenedReplay {
  const standIns: string[] = [];
  const env = withStandIns({ ...process.env }, standIns);
  const config = loadGatewayConfig({ config: configFlag, env });
  const fail = (issues: readonly { path: string; message: string }[]) =>
    new Error(
      `invalid config ${config.file}:\n${issues.map((issue) => `  - ${formatIssue(issue)}`).join("\n")}`,
    );
  if (config.issues.length > 0) throw fail(config.issues);
  try {
    const pipeline = openReplayPipeline(config.raw, {
      configDir: config.configDir,
      // A secret's `{ env }` that is not set gets a stand-in too, as its `${VAR}` would.
      env,
      mainSessionKey: config.sections.session.mainKey,
      channels: config.sections.channels,
      agents: configuredAgents(config.raw),
    });
    return { config, pipeline, standIns };
  } catch (error) {
    if (isConfigError(error)) throw fail((error as ConfigError).issues);
    throw error;
  }
}

/** The note printed when stand-ins were used. */
export function standInNote(standIns: readonly string[]): string | undefined {
  if (standIns.length === 0) return undefined;
  return `note: ${standIns.join(", ")} ${standIns.length === 1 ? "is" : "are"} not set; the replay used a random stand-in\n`;
}

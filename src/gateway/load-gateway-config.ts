/** @module Finds the config `serve` and `check` use (flag, ./gateway.json5, bundled demo), loads it and lists every problem. */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateToken } from "../cli/token.js";
import type { ConfigIssue } from "../config/issues.js";
import { loadGatewayConfigFile } from "../config/load-file.js";
import { type PrepareResult, prepareHooks } from "../prepare-hooks.js";
import { type GatewaySections, parseGatewaySections } from "./gateway-config.js";

/** src/gateway and dist/gateway are both two levels below the package root. */
export const DEMO_CONFIG_FILE = fileURLToPath(
  new URL("../../fixtures/demo/gateway.json5", import.meta.url),
);
export const DEMO_TOKEN_ENV = "HOOKS_TOKEN";

export type ConfigOrigin = "flag" | "cwd" | "demo";

export interface ValidatedGatewayConfig {
  sections: GatewaySections;
  hooks: PrepareResult;
  /** Every problem: the file, the gateway's sections and the plugin's slice, each with its path. */
  issues: ConfigIssue[];
}

export interface LoadedGatewayConfig extends ValidatedGatewayConfig {
  file: string;
  configDir: string;
  origin: ConfigOrigin;
  /** The config after `${VAR}` substitution, as the plugin receives it. */
  raw: Record<string, unknown>;
  /** Set when the demo needed a token and one was generated for this run; printed once by `serve`. */
  generatedToken?: string;
}

export function locateConfigFile(
  flag: string | undefined,
  cwd: string,
): { file: string; origin: ConfigOrigin } {
  if (flag !== undefined) return { file: path.resolve(cwd, flag), origin: "flag" };
  const local = path.join(cwd, "gateway.json5");
  if (existsSync(local)) return { file: local, origin: "cwd" };
  return { file: DEMO_CONFIG_FILE, origin: "demo" };
}

/** The gateway's sections and the plugin's slice checked together, so one run shows every problem. */
export function validateGatewayConfig(
  raw: unknown,
  configDir: string,
  env: NodeJS.ProcessEnv = process.env,
): ValidatedGatewayConfig {
  const { sections, issues } = parseGatewaySections(raw, env);
  const hooks = prepareHooks(raw, {
    configDir,
    mainSessionKey: sections.session.mainKey,
    channels: sections.channels,
  });
  return { sections, hooks, issues: [...issues, ...hooks.issues] };
}

export function loadGatewayConfig(
  options: { config?: string | undefined; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): LoadedGatewayConfig {
  const env = options.env ?? process.env;
  const { file, origin } = locateConfigFile(options.config, options.cwd ?? process.cwd());
  let generatedToken: string | undefined;
  // The demo reads its token from the environment; a first run without one still works, with a fresh token.
  if (origin === "demo" && !env[DEMO_TOKEN_ENV]) {
    generatedToken = generateToken();
    env[DEMO_TOKEN_ENV] = generatedToken;
  }
  const loaded = loadGatewayConfigFile(file, env);
  const validated = validateGatewayConfig(loaded.config, loaded.configDir, env);
  const result: LoadedGatewayConfig = {
    file: loaded.file,
    configDir: loaded.configDir,
    origin,
    raw: loaded.config,
    sections: validated.sections,
    hooks: validated.hooks,
    issues: [...loaded.issues, ...validated.issues],
  };
  if (generatedToken !== undefined) result.generatedToken = generatedToken;
  return result;
}

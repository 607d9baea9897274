/** @module Reads a JSON5 gateway config file and substitutes `${VAR}`; problems come back listed, not thrown. */
import { readFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { substituteEnvVars } from "./env-vars.js";
import type { ConfigIssue } from "./issues.js";
import { checkSecretVariables } from "./secret-variables.js";

export interface LoadedConfigFile {
  /** Absolute path of the file read. */
  file: string;
  configDir: string;
  /** The parsed config with environment variables substituted; `{}` when the file could not be read. */
  config: Record<string, unknown>;
  issues: ConfigIssue[];
}

export function loadGatewayConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfigFile {
  const absolute = path.resolve(file);
  const base = { file: absolute, configDir: path.dirname(absolute), config: {} };
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    return {
      ...base,
      issues: [{ path: "", message: `cannot read ${absolute}: ${(error as Error).message}` }],
    };
  }
  return parseGatewayConfigText(text, absolute, env);
}

export function parseGatewayConfigText(text: string, file: string, env: NodeJS.ProcessEnv): LoadedConfigFile {
  const base = { file, configDir: path.dirname(file), config: {} };
  let parsed: unknown;
  try {
    parsed = JSON5.parse(text);
  } catch (error) {
    return {
      ...base,
      issues: [{ path: "", message: `${file} is not valid JSON5: ${(error as Error).message}` }],
    };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ...base, issues: [{ path: "", message: `${file} must hold a JSON5 object` }] };
  }
  // Before substitution: a secret's variable is told apart from other text by its name, never by its value.
  const misused = checkSecretVariables(parsed as Record<string, unknown>);
  const { value, issues } = substituteEnvVars(parsed, env);
  return { ...base, config: value as Record<string, unknown>, issues: [...misused, ...issues] };
}

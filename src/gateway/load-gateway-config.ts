/** @module Finds the config `serve` and `check` use (flag, ./gateway.json5, bundled demo), loads it and lists the gateway's own problems. */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type ConfigIssue, generateToken, loadGatewayConfigFile } from "../index.js";
import { type GatewaySections, parseGatewaySections } from "./gateway-config.js";
import { hooksCommand } from "./hooks-command.js";
import { withStandIns } from "./stand-ins.js";

/** src/gateway and dist/gateway are both two levels below the package root. */
export const DEMO_CONFIG_FILE = fileURLToPath(new URL("../../fixtures/demo/gateway.json5", import.meta.url));
export const DEMO_TOKEN_ENV = "HOOKS_TOKEN";

export type ConfigOrigin = "flag" | "cwd" | "demo";

export interface LoadedGatewayConfig {
  file: string;
  configDir: string;
  origin: ConfigOrigin;
  /** The config after `${VAR}` substitution, as the plugin receives it. */
  raw: Record<string, unknown>;
  sections: GatewaySections;
  /** Problems of the file and of the gateway's own sections; the plugin reports its own when it registers. */
  issues: ConfigIssue[];
  /** Set when the demo needed a token and one was generated for this run; printed once by `serve`. */
  generatedToken?: string;
  /** Variables the demo names (sender secrets) that were not set: random for this run, never printed. */
  standIns: string[];
  /**
   * Reads the same file again, as a reload does: with the same environment, so the demo keeps this run's generated
   * token and stand-ins (a reload would otherwise change the secrets the signed demo mappings check). Its issues are
   * the file's (unreadable, not JSON5, a variable not set); the gateway's sections are the reload's to check.
   */
  readAgain(): { config: Record<string, unknown>; issues: ConfigIssue[] };
}

export function locateConfigFile(
  flag: string | undefined,
  cwd: string,
): { file: string; origin: ConfigOrigin } {
  if (flag !== undefined) {
    const file = path.resolve(cwd, flag);
    // The bundled demo named on the command line is still the demo: it runs without any variable set.
    return { file, origin: file === DEMO_CONFIG_FILE ? "demo" : "flag" };
  }
  const local = path.join(cwd, "gateway.json5");
  if (existsSync(local)) return { file: local, origin: "cwd" };
  return { file: DEMO_CONFIG_FILE, origin: "demo" };
}

export function loadGatewayConfig(
  options: { config?: string | undefined; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): LoadedGatewayConfig {
  let given = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { file, origin } = locateConfigFile(options.config, cwd);
  let generatedToken: string | undefined;
  // The demo reads its token from the environment; a first run without one still works, with a fresh token. It is
  // read from a copy: the process's own environment, which its transforms could read, never holds it.
  if (origin === "demo" && !given[DEMO_TOKEN_ENV]) {
    generatedToken = generateToken();
    given = { ...given, [DEMO_TOKEN_ENV]: generatedToken };
  }
  // Its sender secrets too: the signed demo mappings work with `hooks replay` until the user sets real ones.
  const standIns: string[] = [];
  const env = origin === "demo" ? withStandIns(given, standIns) : given;
  // The file alone: at start its sections are parsed once below; a reload parses them itself (readAgain).
  const readFile = () => {
    const loaded = loadGatewayConfigFile(file, env);
    const issues = loaded.issues.map((issue) =>
      explainMissingVariable(issue, () => hooksCommand(given, cwd)),
    );
    return { loaded, issues };
  };
  const { loaded, issues: fileIssues } = readFile();
  // The gateway's own settings (an API key variable) are never stood in for: only the plugin's config is.
  const { sections, issues } = parseGatewaySections(loaded.config, given, loaded.configDir);
  const result: LoadedGatewayConfig = {
    file: loaded.file,
    configDir: loaded.configDir,
    origin,
    raw: loaded.config,
    sections,
    issues: [...fileIssues, ...issues],
    standIns,
    readAgain() {
      const again = readFile();
      return { config: again.loaded.config, issues: again.issues };
    },
  };
  if (generatedToken !== undefined) result.generatedToken = generatedToken;
  return result;
}

const SENDER_SECRET = /^hooks\.mappings\[\d+\]\.verify\.(?:secrets?(?:\[\d+\])?|verifyToken)$/;

/**
 * A copy of the demo config still reads its token and its senders' secrets from the environment: say what to do,
 * with the `hooks` command spelled so that it runs where the user is (`npx hooks` in a checkout).
 */
function explainMissingVariable(issue: ConfigIssue, command: () => string): ConfigIssue {
  if (issue.path === "hooks.token" && issue.variable === DEMO_TOKEN_ENV)
    return { ...issue, hint: `export ${DEMO_TOKEN_ENV}="$(${command()} token)" first` };
  if (SENDER_SECRET.test(issue.path) && issue.variable !== undefined)
    return {
      ...issue,
      hint: issue.path.endsWith(".verifyToken")
        ? `export it with a verify token of your own (\`${command()} token\` makes one) and give the sender the same, or remove the mappings of a sender you do not use`
        : "export it with the signing secret from the sender's webhook settings, or remove the mappings of a sender you do not use",
    };
  return issue;
}

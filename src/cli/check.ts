/** @module `hooks check`: validates the config, loads every transform, lists endpoints and mappings; exit 1 on any problem. */
import type { Command } from "commander";
import * as v from "valibot";
import type { ConfigIssue } from "../config/issues.js";
import { MappingSchema } from "../config/mapping-schema.js";
import {
  describeBuilder,
  describeEndpoints,
  describeMatch,
  describeRateLimit,
  formatRows,
} from "../gateway/endpoints.js";
import { loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { checkHooksConfig, configuredAgents, formatIssue } from "../index.js";
import type { MappingSummary } from "../status.js";
import type { CliIo } from "./cli-io.js";
import { foldConfigProblems } from "./config-problems.js";

interface CheckOptions {
  config?: string;
}

function table(rows: readonly string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd());
}

/** The raw mapping a summary was compiled from (user mappings only: presets are always well formed). */
function rawMappingAt(raw: Record<string, unknown>, configPath: string): unknown {
  const index = /^hooks\.mappings\[(\d+)\]$/.exec(configPath)?.[1];
  const mappings = (raw.hooks as { mappings?: unknown } | undefined)?.mappings;
  return index === undefined || !Array.isArray(mappings) ? undefined : mappings[Number(index)];
}

/** A mapping's first problem for the table, its path relative to the mapping (all are listed in full below). */
function firstProblem(problems: readonly ConfigIssue[], configPath: string): string {
  const [first] = problems;
  if (!first) return "";
  const at = first.path.slice(configPath.length).replace(/^\./, "");
  const what = first.variable === undefined ? first.message : `${first.variable} is not set`;
  const more = problems.length > 1 ? ` (+${problems.length - 1} more)` : "";
  return `: ${at ? `${at}: ` : ""}${what}${more}`;
}

function mappingRow(
  mapping: MappingSummary,
  standing: readonly ConfigIssue[],
  raw: Record<string, unknown>,
  hooksPath: string,
): string[] {
  const problems = standing.filter(
    (issue) =>
      (issue.path === mapping.configPath || issue.path.startsWith(`${mapping.configPath}.`)) &&
      !issue.message.includes("failed to load"),
  );
  const rawMapping = rawMappingAt(raw, mapping.configPath);
  if (problems.length > 0 && rawMapping !== undefined && !v.safeParse(MappingSchema, rawMapping).success) {
    // Its shape was refused, so what it was compiled to (a catch-all agent) is a stand-in: show only that it is invalid.
    return [mapping.id, "-", "-", "-", "-", `INVALID${firstProblem(problems, mapping.configPath)}`];
  }
  const state =
    problems.length > 0
      ? `INVALID${firstProblem(problems, mapping.configPath)}`
      : mapping.transformStatus === "failed"
        ? "FAILED"
        : (mapping.transformStatus ?? "ok");
  const url = mapping.matchPath !== undefined ? `${hooksPath}/${mapping.matchPath}` : "";
  // A verify block with a problem compiles to no verification; the table still says who is meant to sign.
  const declared = (rawMapping as { verify?: DeclaredVerify } | undefined)?.verify;
  return [
    mapping.id,
    `${describeMatch(mapping)}${url ? ` → ${url}` : ""}`,
    acceptedCredentials(mapping, declared),
    mapping.action,
    describeBuilder(mapping),
    state,
  ];
}

/**
 * The "gets in with" column, the rule in a few words: a signed path admits a verified signature or, unless
 * `tokenAlso` is false, the correct hook token whatever signature headers came with it.
 */
function acceptedCredentials(mapping: MappingSummary, declared: DeclaredVerify | undefined): string {
  const scheme = mapping.verify ?? (typeof declared?.scheme === "string" ? declared.scheme : undefined);
  if (scheme === undefined) return "token";
  const tokenAlso = mapping.verifyTokenAlso ?? declared?.tokenAlso !== false;
  return tokenAlso ? `${scheme} signature or token` : `${scheme} signature`;
}

/** A verify block as written, for a mapping whose block did not compile. */
interface DeclaredVerify {
  scheme?: unknown;
  tokenAlso?: unknown;
}

async function check(options: CheckOptions, io: CliIo): Promise<void> {
  const loaded = loadGatewayConfig({ config: options.config });
  // One round: the file, the gateway's sections, the plugin's config and every transform, all problems at once.
  const { server } = loaded.sections;
  const hooks = await checkHooksConfig(
    loaded.raw,
    {
      configDir: loaded.configDir,
      mainSessionKey: loaded.sections.session.mainKey,
      channels: loaded.sections.channels,
      agents: configuredAgents(loaded.raw),
    },
    // The gateway's own secrets, named with the plugin's when they come from the environment.
    [server.metricsToken, server.inspector.key].filter((secret) => secret !== undefined),
  );
  const { issues, warnings, standing } = foldConfigProblems(
    [...loaded.issues, ...hooks.issues],
    hooks.warnings,
  );
  const out: string[] = [`config ${loaded.file}`];
  for (const warning of warnings) out.push(`warning: ${warning}`);
  const status = hooks.status;
  if (status && !status.enabled) {
    out.push("hooks are disabled (hooks.enabled is not true): no endpoint is exposed");
  } else if (status) {
    const { host, port } = loaded.sections.server;
    out.push(
      `store ${status.store}`,
      "endpoints (POST):",
      ...formatRows(describeEndpoints(`http://${host}:${port}`, status.path, [], status.rateLimits)),
    );
    // The rate limit column only where one is set: most configs have none.
    const limited = status.mappings.some((mapping) => mapping.rateLimit !== undefined);
    const rows = [
      ["id", "match", "gets in with", "action", "builds with", ...(limited ? ["rate limit"] : []), "status"],
    ];
    for (const mapping of status.mappings) {
      const row = mappingRow(mapping, standing, loaded.raw, status.path);
      if (limited) row.splice(-1, 0, mapping.rateLimit ? describeRateLimit(mapping.rateLimit) : "-");
      rows.push(row);
    }
    out.push(
      status.mappings.length > 0 ? "mappings:" : "mappings: none",
      ...(rows.length > 1 ? table(rows) : []),
    );
  }
  io.stdout.write(`${out.join("\n")}\n`);
  if (issues.length > 0) {
    const problems = issues.map(formatIssue);
    io.stderr.write(
      `${problems.length} problem(s):\n${problems.map((p) => `  - ${p.trim().replace(/\s*\n\s*/g, "\n    ")}\n`).join("")}`,
    );
    io.setExitCode(1);
    return;
  }
  io.stdout.write("ok: config is valid and every transform loads\n");
}

export function registerCheckCommand(program: Command, io: CliIo): void {
  program
    .command("check")
    .description("validate the gateway config, load every transform, and list endpoints and mappings")
    .option("-c, --config <file>", "gateway config (JSON5); default ./gateway.json5, else the bundled demo")
    .addHelpText(
      "after",
      "\nExit code 0 when everything is valid, 1 with every problem listed (each with its config path).",
    )
    .action((options: CheckOptions) => check(options, io));
}

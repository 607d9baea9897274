/** @module `hooks check`: validates the config, loads every transform, lists endpoints and mappings; exit 1 on any problem. */
import type { Command } from "commander";
import { describeBuilder, describeEndpoints, describeMatch, formatRows } from "../gateway/endpoints.js";
import { loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { checkHooksConfig, formatIssue } from "../index.js";
import type { CliIo } from "./main.js";

interface CheckOptions {
  config?: string;
}

function table(rows: readonly string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd());
}

async function check(options: CheckOptions, io: CliIo): Promise<void> {
  const loaded = loadGatewayConfig({ config: options.config });
  // One round: the file, the gateway's sections, the plugin's config and every transform, all problems at once.
  const hooks = await checkHooksConfig(loaded.raw, {
    configDir: loaded.configDir,
    mainSessionKey: loaded.sections.session.mainKey,
    channels: loaded.sections.channels,
  });
  const issues = [...loaded.issues, ...hooks.issues];
  const out: string[] = [`config ${loaded.file}`];
  for (const warning of hooks.warnings) out.push(`warning: ${warning}`);
  const status = hooks.status;
  if (status && !status.enabled) {
    out.push("hooks are disabled (hooks.enabled is not true): no endpoint is exposed");
  } else if (status) {
    const { host, port } = loaded.sections.server;
    out.push(
      `store ${status.store}`,
      "endpoints (POST):",
      ...formatRows(describeEndpoints(`http://${host}:${port}`, status.path, [])),
    );
    const rows = [["id", "match", "signed by", "action", "builds with", "status"]];
    for (const mapping of status.mappings) {
      const invalid = issues.some(
        (issue) =>
          (issue.path === mapping.configPath || issue.path.startsWith(`${mapping.configPath}.`)) &&
          !issue.message.includes("failed to load"),
      );
      const state = invalid
        ? "INVALID"
        : mapping.transformStatus === "failed"
          ? "FAILED"
          : (mapping.transformStatus ?? "ok");
      const url = mapping.matchPath !== undefined ? `${status.path}/${mapping.matchPath}` : "";
      rows.push([
        mapping.id,
        `${describeMatch(mapping)}${url ? ` → ${url}` : ""}`,
        mapping.verify ?? "token",
        mapping.action,
        describeBuilder(mapping),
        state,
      ]);
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

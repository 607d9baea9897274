/** @module `hooks check`: validates the config, loads every transform, lists endpoints and mappings; exit 1 on any problem. */
import type { Command } from "commander";
import { formatIssue } from "../config/issues.js";
import { resolveHooksConfig } from "../config/resolve.js";
import { describeBuilder, describeEndpoints, describeMatch, formatRows } from "../gateway/endpoints.js";
import { loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { compileMappings } from "../mapping/compile-mappings.js";
import { TransformLoader } from "../mapping/transform-loader.js";
import { loadAllTransforms } from "../prepare-hooks.js";

interface CheckOptions {
  config?: string;
}

function table(rows: readonly string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd());
}

async function check(options: CheckOptions): Promise<void> {
  const loaded = loadGatewayConfig({ config: options.config });
  const out: string[] = [`config ${loaded.file}`];
  const problems = loaded.issues.map(formatIssue);
  for (const warning of loaded.hooks.warnings) out.push(`warning: ${warning}`);
  // Compiled again even when some mapping is invalid, so the transforms of the valid ones are still tried.
  const resolved = resolveHooksConfig(loaded.raw, {
    configDir: loaded.configDir,
    mainSessionKey: loaded.sections.session.mainKey,
    channels: loaded.sections.channels,
  }).config;
  const prepared = resolved && { config: resolved, mappings: compileMappings(resolved).mappings };

  if (prepared) {
    const loader = new TransformLoader(prepared.config.transformsDir);
    const reports = await loadAllTransforms(loader, prepared.mappings);
    const loadErrors = new Map(reports.filter((r) => r.error).map((r) => [r.mappingId, r.error]));
    for (const report of reports) {
      if (report.error) {
        const configPath =
          prepared.mappings.find((m) => m.id === report.mappingId)?.configPath ?? "hooks.mappings";
        problems.push(
          `${configPath}.transform.module: mapping "${report.mappingId}": transform ${report.module} failed to load: ${report.error}`,
        );
      }
    }
    if (!prepared.config.enabled) {
      out.push("hooks are disabled (hooks.enabled is not true): no endpoint is exposed");
    } else {
      const { host, port } = loaded.sections.server;
      out.push(
        "endpoints (POST):",
        ...formatRows(describeEndpoints(`http://${host}:${port}`, prepared.config.path, [])),
      );
      const rows = [["id", "match", "action", "builds with", "status"]];
      for (const mapping of prepared.mappings) {
        const loadError = loadErrors.get(mapping.id);
        const invalid = loaded.issues.some(
          (issue) => issue.path === mapping.configPath || issue.path.startsWith(`${mapping.configPath}.`),
        );
        const status = invalid ? "INVALID" : mapping.transform ? (loadError ? "FAILED" : "loaded") : "ok";
        const url = mapping.matchPath !== undefined ? `${prepared.config.path}/${mapping.matchPath}` : "";
        rows.push([
          mapping.id,
          `${describeMatch(mapping)}${url ? ` → ${url}` : ""}`,
          mapping.action,
          describeBuilder(mapping),
          status,
        ]);
      }
      out.push(
        prepared.mappings.length > 0 ? "mappings:" : "mappings: none",
        ...(rows.length > 1 ? table(rows) : []),
      );
    }
  }
  process.stdout.write(`${out.join("\n")}\n`);
  if (problems.length > 0) {
    process.stderr.write(
      `${problems.length} problem(s):\n${problems.map((p) => `  - ${p.trim().replace(/\s*\n\s*/g, "\n    ")}\n`).join("")}`,
    );
    process.exitCode = 1;
    return;
  }
  process.stdout.write("ok: config is valid and every transform loads\n");
}

export function registerCheckCommand(program: Command): void {
  program
    .command("check")
    .description("validate the gateway config, load every transform, and list endpoints and mappings")
    .option("-c, --config <file>", "gateway config (JSON5); default ./gateway.json5, else the bundled demo")
    .addHelpText(
      "after",
      "\nExit code 0 when everything is valid, 1 with every problem listed (each with its config path).",
    )
    .action((options: CheckOptions) => check(options));
}

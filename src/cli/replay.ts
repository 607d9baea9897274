/** @module `hooks replay`: shows what fixtures would do (dry run, no side effects), or sends them to a running gateway. */
import type { Command } from "commander";
import { formatReport, painter, wantsColour } from "../replay/format-report.js";
import { loadFixture } from "../replay/load-fixture.js";
import type { ReplayReport } from "../replay/replay-fixture.js";
import { describeSent, sendFixture } from "../replay/send-fixture.js";
import type { CliIo } from "./cli-io.js";
import { openReplay, standInNote } from "./open-replay.js";

interface ReplayOptions {
  config?: string;
  json?: boolean;
  send?: string;
  token?: string;
}

/** The JSON form scripts read: fixed key order, one entry per fixture. */
export function reportToJson(report: ReplayReport): Record<string, unknown> {
  return {
    name: report.name,
    file: report.file,
    request: report.request,
    status: report.status,
    body: report.body ?? null,
    mappingId: report.mappingId ?? null,
    candidates: report.candidates,
    rendered: report.rendered,
    transformOutput: report.transformOutput.map((output) => (output === undefined ? null : output)),
    actions: report.actions,
    events: report.events,
    logs: report.logs.map(({ level, message }) => ({ level, message })),
  };
}

export function registerReplayCommand(program: Command, io: CliIo): void {
  program
    .command("replay")
    .description(
      "run fixture files through the real pipeline without side effects and show what they would do",
    )
    .argument("<fixture...>", "fixture files (.json or .json5)")
    .option("-c, --config <file>", "gateway config (default: ./gateway.json5, else the bundled demo)")
    .option("--json", "print machine-readable JSON")
    .option(
      "--send <url>",
      "post the fixtures to a running gateway at this base URL instead (e.g. http://127.0.0.1:18789)",
    )
    .option("--token <token>", "token for --send (default: hooks.token from the config)")
    .action(async (files: string[], options: ReplayOptions) => {
      const { pipeline, standIns } = openReplay(options.config);
      const note = standInNote(standIns);
      if (note) io.stderr.write(note);
      const fixtures = files.map((file) => loadFixture(file));
      if (options.send) {
        const results = [];
        for (const loaded of fixtures) {
          // Without --token, the config's as the plugin read it (a `{ file }` or `{ env }` is its text).
          const result = await sendFixture(pipeline.buildRequest(loaded, options.token), options.send);
          results.push({ name: loaded.fixture.name, ...result });
          if (!options.json) io.stdout.write(`${loaded.fixture.name}: ${describeSent(result)}\n`);
        }
        if (options.json) io.stdout.write(`${JSON.stringify({ sent: results }, null, 2)}\n`);
        return;
      }
      const reports: ReplayReport[] = [];
      for (const loaded of fixtures) reports.push(await pipeline.replay(loaded));
      if (options.json) {
        io.stdout.write(`${JSON.stringify({ reports: reports.map(reportToJson) }, null, 2)}\n`);
        return;
      }
      const paint = painter(wantsColour(io.stdout));
      io.stdout.write(`${reports.map((report) => formatReport(report, paint)).join("\n\n")}\n`);
    });
}

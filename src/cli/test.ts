/** @module `hooks test`: runs every fixture that carries `expect`, one line each, and closes with "N passed, N failed". */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { checkExpectation, expectationFrom } from "../replay/expectations.js";
import { setTopLevelField } from "../replay/fixture-text.js";
import { painter, wantsColour } from "../replay/format-report.js";
import {
  type FixtureError,
  findFixtureFiles,
  type LoadedFixture,
  looksLikeFixture,
  parseFixtureText,
  validateFixture,
} from "../replay/load-fixture.js";
import type { ReplayReport } from "../replay/replay-fixture.js";
import type { CliIo } from "./cli-io.js";
import { openReplay, standInNote } from "./open-replay.js";

interface TestOptions {
  config?: string;
  update?: boolean;
  acceptFailures?: boolean;
}

/** A status `--update` does not record as expected unless told to: a failure is usually a bug, not a result. */
const isFailure = (status: number) => status >= 500 || status === 401;

/** Sets the fixture's `expect` in its text; everything else in the file (comments, layout) stays as written. */
function writeExpectation(file: string, text: string, expectation: unknown): void {
  writeFileSync(file, setTopLevelField(text, "expect", expectation, { json: file.endsWith(".json") }));
}

/** The error code and, for mapping failures, what the log said: enough to see why without a second run. */
function failureReason(report: ReplayReport): string {
  const body = report.body as { code?: unknown } | undefined;
  const code = typeof body?.code === "string" ? ` ${body.code}` : "";
  const logged = report.logs.find((log) => log.level === "error" || log.level === "warn")?.message;
  return `${code}${logged ? ` (${logged})` : ""}`;
}

export function registerTestCommand(program: Command, io: CliIo): void {
  program
    .command("test")
    .description(
      "run the fixtures under a directory that carry an `expect` block and report passes and failures",
    )
    .argument("[dir]", "directory searched recursively for .json/.json5 fixtures", "fixtures")
    .option("-c, --config <file>", "gateway config (default: ./gateway.json5, else the bundled demo)")
    .option("--update", "record the current results as each fixture's expectation")
    .option(
      "--accept-failures",
      "with --update, also record 5xx and 401 results (otherwise those fixtures are left unchanged)",
    )
    .action(async (dir: string, options: TestOptions) => {
      const { pipeline, standIns } = openReplay(options.config);
      const note = standInNote(standIns);
      if (note) io.stderr.write(note);
      const paint = painter(wantsColour(io.stdout));
      let passed = 0;
      let failed = 0;
      let withoutExpect = 0;
      const notRecorded: string[] = [];
      const rewritten: string[] = [];
      let kept = 0;
      for (const file of findFixtureFiles(dir)) {
        const shown = path.relative(process.cwd(), file);
        let text: string;
        let parsed: unknown;
        try {
          text = readFileSync(file, "utf8");
          parsed = parseFixtureText(text, shown);
        } catch {
          continue; // Not JSON5 at all: not a fixture, not ours to judge.
        }
        if (!looksLikeFixture(parsed)) continue;
        let loaded: LoadedFixture;
        try {
          loaded = validateFixture(parsed, file);
        } catch (error) {
          failed++;
          io.stdout.write(
            `${paint("red", "✗")} ${shown}\n    ${(error as FixtureError).message.replaceAll("\n", "\n    ")}\n`,
          );
          continue;
        }
        const { fixture } = loaded;
        if (!fixture.expect && !options.update) {
          withoutExpect++;
          continue;
        }
        const report = await pipeline.replay(loaded);
        const result = fixture.expect ? checkExpectation(report, fixture.expect) : undefined;
        // An expectation that still holds is left byte for byte: the file is the author's, not ours to reformat.
        if (options.update && !result?.passed) {
          // A failure the fixture already expects (a negative fixture) may be re-recorded; a new one may not.
          const alreadyExpected = fixture.expect?.status === report.status;
          if (isFailure(report.status) && !alreadyExpected && !options.acceptFailures) {
            failed++;
            notRecorded.push(shown);
            io.stdout.write(
              `${paint("red", "✗")} ${fixture.name} ${paint("dim", `(${shown})`)}\n    ${paint("red", "-")} got ${report.status}${failureReason(report)}; not recorded (use --accept-failures to record it)\n`,
            );
            continue;
          }
          writeExpectation(file, text, expectationFrom(report));
          rewritten.push(shown);
          passed++;
          io.stdout.write(
            `${paint("cyan", "↻")} ${fixture.name} ${paint("dim", `(${shown}: ${report.status})`)}\n`,
          );
          continue;
        }
        if (result!.passed) {
          passed++;
          if (options.update) kept++;
          io.stdout.write(`${paint("green", "✓")} ${fixture.name} ${paint("dim", `(${shown})`)}\n`);
        } else {
          failed++;
          io.stdout.write(`${paint("red", "✗")} ${fixture.name} ${paint("dim", `(${shown})`)}\n`);
          for (const problem of result!.problems) io.stdout.write(`    ${paint("red", "-")} ${problem}\n`);
        }
      }
      if (options.update) {
        io.stdout.write(
          `rewrote ${rewritten.length} fixture(s)${rewritten.length > 0 ? `: ${rewritten.join(", ")}` : ""}; left ${kept} as they were (their expectation still holds)\n`,
        );
      }
      if (notRecorded.length > 0) {
        io.stdout.write(
          `${notRecorded.length} fixture(s) left unchanged: ${notRecorded.join(", ")} (a new 401 or 5xx is recorded only with --accept-failures)\n`,
        );
      }
      if (withoutExpect > 0)
        io.stdout.write(paint("dim", `(${withoutExpect} fixture(s) without expect not run)\n`));
      io.stdout.write(`${passed} passed, ${failed} failed\n`);
      if (failed > 0) io.setExitCode(1);
    });
}

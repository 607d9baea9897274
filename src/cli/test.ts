/** @module `hooks test`: runs every fixture that carries `expect`, one line each, and closes with "N passed, N failed". */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { checkExpectation, type ExpectationResult, expectationFrom } from "../replay/expectations.js";
import type { Fixture } from "../replay/fixture-schema.js";
import { setTopLevelField } from "../replay/fixture-text.js";
import { type Paint, painter, wantsColour } from "../replay/format-report.js";
import {
  type FixtureError,
  findFixtureFiles,
  type LoadedFixture,
  looksLikeFixture,
  parseFixtureText,
  validateFixture,
} from "../replay/load-fixture.js";
import type { ReplayPipeline, ReplayReport } from "../replay/replay-fixture.js";
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
      await runFixtureTests(dir, options, io);
    });
}

/** Tests every fixture under `dir`, then prints the totals; a failure makes the exit code 1. */
async function runFixtureTests(dir: string, options: TestOptions, io: CliIo): Promise<void> {
  const { pipeline, standIns } = openReplay(options.config);
  const note = standInNote(standIns);
  if (note) io.stderr.write(note);
  const run = new FixtureTestRun(pipeline, options, io);
  for (const file of findFixtureFiles(dir)) await run.testFile(file);
  run.printTotals();
  if (run.anyFailed) io.setExitCode(1);
}

/** A fixture whose outcome `--update` may record: where it is, its text as written, and what the replay gave. */
interface UpdateCandidate {
  file: string;
  shown: string;
  text: string;
  fixture: Fixture;
  report: ReplayReport;
}

/** One `hooks test` run: tests the fixture files one at a time, a line each, and counts what the totals report. */
class FixtureTestRun {
  private readonly pipeline: ReplayPipeline;
  private readonly options: TestOptions;
  private readonly io: CliIo;
  private readonly paint: Paint;
  private passed = 0;
  private failed = 0;
  private withoutExpect = 0;
  private kept = 0;
  private readonly notRecorded: string[] = [];
  private readonly rewritten: string[] = [];

  constructor(pipeline: ReplayPipeline, options: TestOptions, io: CliIo) {
    this.pipeline = pipeline;
    this.options = options;
    this.io = io;
    this.paint = painter(wantsColour(io.stdout));
  }

  get anyFailed(): boolean {
    return this.failed > 0;
  }

  async testFile(file: string): Promise<void> {
    const shown = path.relative(process.cwd(), file);
    const read = readFixtureFile(file, shown);
    if (read === undefined || !looksLikeFixture(read.parsed)) return;
    const loaded = this.validate(read.parsed, file, shown);
    if (loaded === undefined) return;
    const { fixture } = loaded;
    if (!fixture.expect && !this.options.update) {
      this.withoutExpect++;
      return;
    }
    const report = await this.pipeline.replay(loaded);
    const result = fixture.expect ? checkExpectation(report, fixture.expect) : undefined;
    // An expectation that still holds is left byte for byte: the file is the author's, not ours to reformat.
    if (this.options.update && !result?.passed) {
      this.recordOutcome({ file, shown, text: read.text, fixture, report });
      return;
    }
    this.reportResult(fixture.name, shown, result!);
  }

  printTotals(): void {
    const { io, paint } = this;
    if (this.options.update) {
      const { rewritten } = this;
      io.stdout.write(
        `rewrote ${rewritten.length} fixture(s)${rewritten.length > 0 ? `: ${rewritten.join(", ")}` : ""}; left ${this.kept} as they were (their expectation still holds)\n`,
      );
    }
    if (this.notRecorded.length > 0) {
      io.stdout.write(
        `${this.notRecorded.length} fixture(s) left unchanged: ${this.notRecorded.join(", ")} (a new 401 or 5xx is recorded only with --accept-failures)\n`,
      );
    }
    if (this.withoutExpect > 0)
      io.stdout.write(paint("dim", `(${this.withoutExpect} fixture(s) without expect not run)\n`));
    io.stdout.write(`${this.passed} passed, ${this.failed} failed\n`);
  }

  /** A file that looks like a fixture but is not a valid one counts as failed, with the reason. */
  private validate(parsed: unknown, file: string, shown: string): LoadedFixture | undefined {
    try {
      return validateFixture(parsed, file);
    } catch (error) {
      this.failed++;
      this.io.stdout.write(
        `${this.paint("red", "✗")} ${shown}\n    ${(error as FixtureError).message.replaceAll("\n", "\n    ")}\n`,
      );
      return undefined;
    }
  }

  /** `--update`: writes the new outcome as the fixture's expectation, unless it is a failure not to record. */
  private recordOutcome({ file, shown, text, fixture, report }: UpdateCandidate): void {
    const { io, paint } = this;
    // A failure the fixture already expects (a negative fixture) may be re-recorded; a new one may not.
    const alreadyExpected = fixture.expect?.status === report.status;
    if (isFailure(report.status) && !alreadyExpected && !this.options.acceptFailures) {
      this.failed++;
      this.notRecorded.push(shown);
      io.stdout.write(
        `${paint("red", "✗")} ${fixture.name} ${paint("dim", `(${shown})`)}\n    ${paint("red", "-")} got ${report.status}${failureReason(report)}; not recorded (use --accept-failures to record it)\n`,
      );
      return;
    }
    writeExpectation(file, text, expectationFrom(report));
    this.rewritten.push(shown);
    this.passed++;
    io.stdout.write(
      `${paint("cyan", "↻")} ${fixture.name} ${paint("dim", `(${shown}: ${report.status})`)}\n`,
    );
  }

  private reportResult(name: string, shown: string, result: ExpectationResult): void {
    const { io, paint } = this;
    if (result.passed) {
      this.passed++;
      if (this.options.update) this.kept++;
      io.stdout.write(`${paint("green", "✓")} ${name} ${paint("dim", `(${shown})`)}\n`);
    } else {
      this.failed++;
      io.stdout.write(`${paint("red", "✗")} ${name} ${paint("dim", `(${shown})`)}\n`);
      for (const problem of result.problems) io.stdout.write(`    ${paint("red", "-")} ${problem}\n`);
    }
  }
}

/** The file's text and what it parses to; undefined for a file that cannot be read or parsed. */
function readFixtureFile(file: string, shown: string): { text: string; parsed: unknown } | undefined {
  try {
    const text = readFileSync(file, "utf8");
    return { text, parsed: parseFixtureText(text, shown) };
  } catch {
    return undefined; // Not JSON5 at all: not a fixture, not ours to judge.
  }
}

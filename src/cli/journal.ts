/** @module `hooks journal list | show | replay`: what the gateway accepted and refused, what became of it, and running it again. */
import path from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { journalDirIn } from "../config/resolve.js";
import { shellQuote } from "../gateway/endpoints.js";
import { hooksCommand } from "../gateway/hooks-command.js";
import { loadGatewayConfig } from "../gateway/load-gateway-config.js";
import { DEFAULT_STATE_DIR } from "../gateway/start-gateway.js";
import { type JournalEntry, readJournal } from "../journal/read-journal.js";
import { writeFixtureFile } from "../replay/fixture-file.js";
import { fixtureFromRecord } from "../replay/fixture-from-journal.js";
import { formatReport, painter, wantsColour } from "../replay/format-report.js";
import { validateFixture } from "../replay/load-fixture.js";
import { describeSent, sendFixture } from "../replay/send-fixture.js";
import type { CliIo } from "./cli-io.js";
import { formatJournalEntry, formatJournalLine, journalEntryToJson } from "./journal-format.js";
import { openReplay, standInNote } from "./open-replay.js";
import { parseLimit, parseSince } from "./option-values.js";
import { reportToJson } from "./replay.js";

interface WhereOptions {
  config?: string;
  stateDir?: string;
  dir?: string;
  json?: boolean;
}

interface ListOptions extends WhereOptions {
  since?: number;
  hook?: string;
  status?: StatusFilter;
  limit: number;
}

interface ReplayOptions extends WhereOptions {
  send?: string;
  token?: string;
  fixture?: string;
}

const STATES = ["done", "interrupted", "pending", "refused", "duplicate"] as const;
type StatusFilter = (entry: JournalEntry) => boolean;

/** An HTTP status (`202`), a class (`4xx`), or what became of the request (`pending`, `interrupted`, …). */
export function parseStatus(value: string): StatusFilter {
  const wanted = value.trim().toLowerCase();
  if (/^\d{3}$/.test(wanted)) return (entry) => entry.status === Number(wanted);
  if (/^[1-5]xx$/.test(wanted)) return (entry) => Math.floor(entry.status / 100) === Number(wanted[0]);
  if ((STATES as readonly string[]).includes(wanted)) return (entry) => entry.state === wanted;
  throw new InvalidArgumentError(`must be a status (202), a class (4xx) or one of ${STATES.join(", ")}`);
}

/** `--dir`, else the config's `hooks.journal.dir` (relative to the config file), else `<state dir>/hooks-journal`. */
function journalDirOf(options: WhereOptions): string {
  if (options.dir !== undefined) return path.resolve(options.dir);
  const loaded = loadGatewayConfig({ config: options.config });
  const hooks = loaded.raw.hooks as { journal?: { dir?: unknown } } | undefined;
  const configured = hooks?.journal?.dir;
  if (typeof configured === "string" && configured !== "") return path.resolve(loaded.configDir, configured);
  return journalDirIn(path.resolve(options.stateDir ?? DEFAULT_STATE_DIR));
}

/** The request answered with this X-Request-Id (the latest, should a caller have sent one id twice). */
async function findEntry(dir: string, requestId: string): Promise<JournalEntry> {
  const matches = (await readJournal(dir, { keepRecord: (id) => id === requestId })).filter(
    (entry) => entry.requestId === requestId || entry.id === requestId,
  );
  const entry = matches.at(-1);
  if (!entry) throw new Error(`no request ${requestId} in the journal at ${dir}`);
  return entry;
}

async function list(options: ListOptions, io: CliIo): Promise<void> {
  const dir = journalDirOf(options);
  const { since, hook, status } = options;
  const entries = await readJournal(dir, {
    where: (at, entryHook) =>
      (since === undefined || at >= since) && (hook === undefined || entryHook === hook),
  });
  const shown = entries.filter((entry) => status === undefined || status(entry)).slice(-options.limit);
  if (options.json) {
    for (const entry of shown) io.stdout.write(`${JSON.stringify(withoutRecord(entry))}\n`);
    return;
  }
  if (shown.length === 0) {
    io.stdout.write(`no requests in the journal at ${dir} match\n`);
    return;
  }
  for (const entry of shown) io.stdout.write(`${formatJournalLine(entry)}\n`);
}

async function show(requestId: string, options: WhereOptions, io: CliIo): Promise<void> {
  const entry = await findEntry(journalDirOf(options), requestId);
  io.stdout.write(
    options.json ? `${JSON.stringify(journalEntryToJson(entry), null, 2)}\n` : formatJournalEntry(entry),
  );
}

async function replay(requestId: string, options: ReplayOptions, io: CliIo): Promise<void> {
  const entry = await findEntry(journalDirOf(options), requestId);
  if (!entry.record) {
    throw new Error(
      `request ${requestId} was not accepted (${entry.status}): only accepted requests are kept`,
    );
  }
  const fixture = fixtureFromRecord(entry.record);
  if (!fixture) {
    throw new Error(
      `request ${requestId} was recorded without its body (hooks.journal.storePayloads is false)`,
    );
  }
  if (options.fixture !== undefined) {
    writeFixtureFile(options.fixture, fixture, [
      `Taken from the journal (request id ${requestId}); credentials removed.`,
      `Replay: ${hooksCommand()} replay ${shellQuote(options.fixture)}`,
    ]);
    io.stdout.write(`wrote ${options.fixture}\n`);
    return;
  }
  const { pipeline, standIns } = openReplay(options.config);
  const note = standInNote(standIns);
  if (note) io.stderr.write(note);
  const loaded = validateFixture(fixture, `journal:${requestId}`);
  if (options.send !== undefined) {
    // Without --token, the config's as the plugin read it (a `{ file }` or `{ env }` is its text).
    const result = await sendFixture(pipeline.buildRequest(loaded, options.token), options.send);
    io.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${describeSent(result)}\n`);
    return;
  }
  const report = await pipeline.replay(loaded);
  if (options.json) {
    io.stdout.write(`${JSON.stringify(reportToJson(report), null, 2)}\n`);
    return;
  }
  io.stdout.write(`${formatReport(report, painter(wantsColour(io.stdout)))}\n`);
}

function withoutRecord(entry: JournalEntry): Omit<JournalEntry, "record"> {
  const { record: _record, ...rest } = entry;
  return rest;
}

/** The options every sub-command shares: where the journal is. */
function whereOptions(command: Command): Command {
  return command
    .option("-c, --config <file>", "gateway config (default: ./gateway.json5, else the bundled demo)")
    .option("--state-dir <dir>", `the gateway's state directory (default: ${DEFAULT_STATE_DIR})`)
    .option(
      "--dir <dir>",
      "the journal directory itself (inside OpenClaw: <OpenClaw state>/hooks-intake/hooks-journal)",
    )
    .option("--json", "print machine-readable JSON");
}

export function registerJournalCommand(program: Command, io: CliIo): void {
  const journal = program
    .command("journal")
    .description("what the gateway accepted and refused, what became of it, and running a request again");
  whereOptions(
    journal
      .command("list")
      .description("one line per request, oldest first: time, status, what became of it, hook, request id")
      .option("--since <when>", "only requests since then: 30m, 1h, 2d, or a date", (value) =>
        parseSince(value),
      )
      .option("--hook <name>", "only this hook (wake, agent, github/push, …)")
      .option("--status <status>", `a status (202), a class (4xx), or ${STATES.join(", ")}`, parseStatus)
      .option("--limit <n>", "at most this many, the newest", parseLimit, 50),
  ).action((options: ListOptions) => list(options, io));
  whereOptions(
    journal
      .command("show")
      .description("one request: its record, its events with their ids, and what became of them")
      .argument("<requestId>", "the request id (the X-Request-Id answer header)"),
  ).action((requestId: string, options: WhereOptions) => show(requestId, options, io));
  whereOptions(
    journal
      .command("replay")
      .description("run an accepted request again through the pipeline (a dry run unless --send)")
      .argument("<requestId>", "the request id (the X-Request-Id answer header)")
      .option(
        "--send <url>",
        "post it to a running gateway at this base URL instead (e.g. http://127.0.0.1:18789), with its delivery id: a gateway that remembers the id does nothing, and this says so",
      )
      .option("--token <token>", "token for --send (default: hooks.token from the config)")
      .option(
        "--fixture <file>",
        "write it as a fixture file instead, for hooks replay and hooks test (JSON5, or JSON for a .json name; mode 0600)",
      ),
  ).action((requestId: string, options: ReplayOptions) => replay(requestId, options, io));
}

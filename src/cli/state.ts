/** @module `hooks state`: shows the reference gateway's queue, transcript, sessions and outbox, read-only, also while it runs. */
import type { Command } from "commander";
import { DEFAULT_STATE_DIR } from "../gateway/state-db.js";
import { openStateReader, type ReadWindow, type StateReader } from "../gateway/state-reader.js";
import type { HistoryEntry, OutboxRecord, TranscriptEntry } from "../gateway/state-records.js";
import type { CliIo } from "./cli-io.js";
import { parseDuration, parseLimit } from "./option-values.js";

interface StateOptions {
  stateDir: string;
  json?: boolean;
}

interface WindowOptions {
  since?: number;
  limit?: number;
}

/** Rows shown when no --limit is given: the latest ones, enough for a screen or two. */
const DEFAULT_LIMIT = 100;
/** Characters of text kept on a line; `--json` has all of it. */
const TEXT_CHARS = 120;
/**
 * The text on one line. Untrusted content arrives wrapped in a notice and markers for the model; here the
 * wrapper becomes `[untrusted]` so that the content itself fits on the line.
 */
export function oneLine(text: string, chars = TEXT_CHARS): string {
  const flat = text
    .replace(/SECURITY NOTICE:[^\n]*\n<<<EXTERNAL_UNTRUSTED_CONTENT[^\n]*>>>\n?/g, "[untrusted] ")
    .replace(/\n?<<<END_EXTERNAL_UNTRUSTED_CONTENT[^\n]*>>>/g, "")
    // Control characters from a payload (terminal escape sequences) never reach the operator's terminal.
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat;
}

function ids(fields: Record<string, string | number | undefined>): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
}

function transcriptLine(entry: TranscriptEntry): string {
  if (entry.kind === "heartbeat") {
    return `${entry.at}  heartbeat     ${ids({ drained: entry.drained, reasons: entry.reasons.join(",") || undefined })}`;
  }
  const { source } = entry;
  const from = ids({
    event: entry.eventId,
    hook: source.hook,
    mapping: source.mappingId,
    request: source.requestId,
  });
  return `${entry.at}  system-event  ${from}  ${oneLine(entry.text)}`;
}

function sessionLine(entry: HistoryEntry): string {
  return `${entry.at}  ${entry.role.padEnd(9)}  ${ids({ run: entry.runId, event: entry.eventId }) || "-"}  ${oneLine(entry.content)}`;
}

function outboxLine(entry: OutboxRecord): string {
  const to = `${entry.channel}${entry.to === undefined ? "" : ` → ${entry.to}`}`;
  const from = ids({
    run: entry.runId,
    hook: entry.hook,
    mapping: entry.mappingId,
    request: entry.requestId,
  });
  const why = entry.reason === undefined ? "" : ` (${oneLine(entry.reason)})`;
  return `${entry.at}  ${entry.status.padEnd(13)}  ${to}  ${from}${why}  ${oneLine(entry.text)}`;
}

function windowOf(options: WindowOptions, defaultLimit: number | undefined): ReadWindow {
  const window: ReadWindow = {};
  if (options.since !== undefined) window.sinceMs = Date.now() - options.since;
  // With --since alone, everything since then; with neither, the latest rows.
  const limit = options.limit ?? (options.since === undefined ? defaultLimit : undefined);
  if (limit !== undefined) window.limit = limit;
  return window;
}

/** Opens the database, reads, prints one line per row (JSON with --json), closes. */
function show<T>(
  io: CliIo,
  command: Command,
  read: (reader: StateReader) => T[],
  line: (row: T) => string,
): void {
  const { stateDir, json } = command.optsWithGlobals<StateOptions>();
  const reader = openStateReader(stateDir);
  try {
    const rows = read(reader);
    const text = rows.map((row) => (json ? JSON.stringify(row) : line(row))).join("\n");
    if (text !== "") io.stdout.write(`${text}\n`);
  } finally {
    reader.close();
  }
}

/** `--since` and `--limit`, as the transcript and the outbox take them. */
function windowed(command: Command, rows: string): Command {
  return command
    .option("--since <duration>", `only ${rows} from this long ago on (90s, 30m, 1h, 7d)`, parseDuration)
    .option(
      "--limit <n>",
      `only the last <n> ${rows} (default ${DEFAULT_LIMIT} when --since is not given)`,
      parseLimit,
    );
}

export function registerStateCommand(program: Command, io: CliIo): void {
  const state = program
    .command("state")
    .description(
      "show the reference gateway's state database: the queue, the transcript, a session, the outbox (read-only; works while the gateway runs)",
    )
    .option("--state-dir <dir>", "the state directory `hooks serve` uses", DEFAULT_STATE_DIR)
    .option("--json", "one JSON object per line instead of readable lines")
    .addHelpText(
      "after",
      "\nTimes are UTC. Texts are cut to one line; --json prints them whole.\nExit codes: 0 ok, 1 no state database in the directory (or better-sqlite3 missing), 2 usage.",
    );

  state
    .command("queue")
    .description("system events queued for the main session and not yet drained by a heartbeat")
    .action((_options: unknown, command: Command) =>
      show(io, command, (reader) => reader.queue(), transcriptLine),
    );

  windowed(state.command("transcript"), "entries")
    .description("the main session's transcript: drained events and the heartbeats that drained them")
    .action((options: WindowOptions, command: Command) =>
      show(io, command, (reader) => reader.transcript(windowOf(options, DEFAULT_LIMIT)), transcriptLine),
    );

  state
    .command("session")
    .description("the messages of one session key, oldest first")
    .argument("<key>", "the session key, e.g. hook:ci or main")
    .option("--limit <n>", "only the last <n> messages", parseLimit)
    .action((key: string, options: WindowOptions, command: Command) =>
      show(io, command, (reader) => reader.session(key, windowOf(options, undefined)), sessionLine),
    );

  windowed(state.command("outbox"), "deliveries")
    .description("deliveries: where each reply went, or why it could not go")
    .action((options: WindowOptions, command: Command) =>
      show(io, command, (reader) => reader.outbox(windowOf(options, DEFAULT_LIMIT)), outboxLine),
    );
}

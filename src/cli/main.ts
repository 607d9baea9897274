/** @module The `hooks` CLI: one commander program, one file per command; exit 0 ok, 1 failure, 2 usage. */
import { Command, CommanderError } from "commander";
import { formatIssue, isConfigError } from "../config/issues.js";
import { type CliIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./cli-io.js";

/** What a caller of `main` may replace: the output streams, what stops `hooks serve`, and who reads stdout. */
export type CliStreams = Pick<CliIo, "stdout" | "stderr" | "stop" | "terminal">;

type Registrar = (program: Command, io: CliIo) => void;

/**
 * Command registrars, each adding one command (or group). Loaded on demand: the mailbox helper's IMAP and
 * MIME libraries alone cost `serve` a few hundred milliseconds of start-up it does not need.
 */
const COMMANDS: ReadonlyArray<{ name: string; load(): Promise<Registrar> }> = [
  { name: "serve", load: async () => (await import("./serve.js")).registerServeCommand },
  { name: "check", load: async () => (await import("./check.js")).registerCheckCommand },
  { name: "replay", load: async () => (await import("./replay.js")).registerReplayCommand },
  { name: "test", load: async () => (await import("./test.js")).registerTestCommand },
  { name: "mailbox", load: async () => (await import("./mailbox.js")).registerMailboxCommand },
  { name: "journal", load: async () => (await import("./journal.js")).registerJournalCommand },
  { name: "token", load: async () => (await import("./token.js")).registerTokenCommand },
  { name: "state", load: async () => (await import("./state.js")).registerStateCommand },
];

/** Sub-commands (and their own sub-commands) inherit the override so their usage errors reach main's catch. */
function overrideExits(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) overrideExits(sub);
}

/** The program with the command `argv` names, or with every command when it names none (help, typos). */
async function createProgram(argv: readonly string[], io: CliIo): Promise<Command> {
  const program = new Command("hooks")
    .description(
      "Webhook intake for the assistant gateway: serve, check, replay, test, journal, mailbox, token.",
    )
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
    })
    .showHelpAfterError();
  const named = COMMANDS.filter((command) => command.name === argv[0]);
  const registrars = await Promise.all(
    (named.length > 0 ? named : COMMANDS).map((command) => command.load()),
  );
  for (const register of registrars) register(program, io);
  overrideExits(program);
  return program;
}

function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    setExitCode(code) {
      process.exitCode = code;
    },
  };
}

/** The process's streams already watched for a reader going away (main may run more than once in a process). */
const watchedStreams = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader that goes away (`hooks journal list | head -1`, a pager quit early) is no failure: what is left to print
 * is dropped, and the command still runs to its end (an `--update` half done would be worse than output lost) with
 * the exit code it would have had. Any other write error is said on stderr and fails the run.
 */
function dropOutputOnClosedPipe(io: CliIo): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (watchedStreams.has(stream)) continue;
    watchedStreams.add(stream);
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") return;
      if (stream !== process.stderr) {
        process.stderr.write(`hooks: cannot write the output (${error.code ?? error.message})\n`);
      }
      io.setExitCode(EXIT_FAILURE);
    });
  }
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[], streams?: CliStreams): Promise<number> {
  let exitCode: number = EXIT_OK;
  const io: CliIo = {
    ...(streams ?? processIo()),
    env: process.env,
    setExitCode(code) {
      exitCode = code;
      // A code set after main resolved (a stdout error met late) still reaches the process it runs in.
      if (streams === undefined) process.exitCode = code;
    },
  };
  if (streams === undefined) dropOutputOnClosedPipe(io);
  const program = await createProgram(argv, io);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT_OK;
      // Help shown because no command was given is a usage error; `hooks help` is not.
      if (error.code === "commander.help") return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      return EXIT_USAGE;
    }
    if (isConfigError(error)) {
      io.stderr.write(
        `hooks: invalid config, ${error.issues.length} problem(s):\n${error.issues.map((i) => `  - ${formatIssue(i)}\n`).join("")}`,
      );
      return EXIT_FAILURE;
    }
    io.stderr.write(`hooks: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

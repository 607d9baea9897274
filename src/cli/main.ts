/** @module The `hooks` CLI: one commander program, one file per command; exit 0 ok, 1 failure, 2 usage. */
import { Command, CommanderError } from "commander";
import { registerTokenCommand } from "./token.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Command registrars; each adds one command (or group) to the program. */
const COMMANDS: ReadonlyArray<(program: Command) => void> = [registerTokenCommand];

export function createProgram(): Command {
  const program = new Command("hooks")
    .description("Webhook intake for the assistant gateway: serve, check, replay, test, mailbox, token.")
    .showHelpAfterError()
    .exitOverride();
  for (const register of COMMANDS) register(program);
  // Sub-commands inherit the override so their usage errors also end up in main's catch.
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT_OK;
      if (error.code === "commander.help") return EXIT_OK;
      return EXIT_USAGE;
    }
    process.stderr.write(`hooks: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

/** @module `hooks token`: prints a new random hook token (32 bytes, base64url). */
import type { Command } from "commander";
import { generateToken } from "../index.js";
import type { CliIo } from "./cli-io.js";

export function registerTokenCommand(program: Command, io: CliIo): void {
  program
    .command("token")
    .description("print a new random token for hooks.token (32 random bytes, base64url)")
    .action(() => {
      io.stdout.write(`${generateToken()}\n`);
    });
}

/** @module What the `hooks` CLI's commands share with main: the CliIo a run writes through and the exit codes (0 ok, 1 failure, 2 usage). */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * Where one run of the CLI writes and how a command reports its exit code; `main` builds it, from the process's
 * streams unless told otherwise (tests run the CLI in-process with their own).
 */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  setExitCode(code: number): void;
  /** When set, `hooks serve` stops once it resolves (to the name it logs) instead of on SIGINT/SIGTERM. */
  stop?: Promise<string>;
  /**
   * Whether a person reads stdout (default: stdout is a TTY). `hooks serve` prints the inspector's login link there
   * only then: a service's stdout ends up in its log.
   */
  terminal?: boolean;
}

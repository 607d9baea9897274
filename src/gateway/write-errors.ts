/** @module How the gateway reports a state or record write that failed: the file and the error code, never the content. */
import type { HostLogger } from "../host/contract.js";

/** Told when a write fails: the file and the error (its code says why), never what was being written. */
export type WriteErrorHandler = (error: NodeJS.ErrnoException, file: string) => void;

/** The default report, for writers nobody gave a handler: the process has no logger to hand. */
export const reportOnStderr: WriteErrorHandler = (error, file) => {
  process.stderr.write(`hooks gateway: cannot write ${file} (${error.code ?? error.message})\n`);
};

/** The gateway's report of a failed write (the state database, the record): an error line with the file and the code. */
export function logWriteError(logger: Pick<HostLogger, "error">): WriteErrorHandler {
  return (error, file) =>
    logger.error("write failed; the gateway keeps running without what it could not write", {
      file,
      code: error.code ?? "unknown",
    });
}

/**
 * Wraps a handler so that a failure is said once, not once per write, until a write succeeds again: a full disk
 * under load would otherwise log thousands of identical lines. Call `succeeded()` after each good write.
 */
export function reportOncePerFailure(onError: WriteErrorHandler): {
  failed(error: unknown, file: string): void;
  succeeded(): void;
} {
  let failing: string | undefined;
  return {
    failed(error, file) {
      const errno = error as NodeJS.ErrnoException;
      const code = errno.code ?? errno.message;
      if (code === failing) return;
      failing = code;
      onError(errno, file);
    },
    succeeded() {
      failing = undefined;
    },
  };
}

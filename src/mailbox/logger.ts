/** @module The helper's log sink: plain lines, no secrets; tests pass a recording one. */

/**
 * Every line the mailbox helper writes goes through this. Callers never pass the password, the hook token,
 * an Authorization header, or message content (sender, subject, text): only counts, UIDs and message ids.
 */
export interface MailboxLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function createConsoleLogger(
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
): MailboxLogger {
  const line = (level: string, message: string) =>
    `${new Date().toISOString()} mailbox ${level}: ${message}\n`;
  return {
    info: (message) => stdout.write(line("info", message)),
    warn: (message) => stderr.write(line("warn", message)),
    error: (message) => stderr.write(line("error", message)),
  };
}

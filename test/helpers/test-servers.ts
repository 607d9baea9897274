/** @module The real servers some suites need (redis-server, dovecot, chromium): whether this machine has them, why a suite skips, and the one line a run prints about what it skipped. */
import { accessSync, constants } from "node:fs";
import path from "node:path";

export interface TestServer {
  /** The program a suite starts. */
  binary: string;
  /** The Debian package that installs it. */
  package: string;
  /** What is skipped without it, as the end-of-run line names it. */
  suites: string;
}

export const REDIS: TestServer = {
  binary: "redis-server",
  package: "redis-server",
  suites: "the Redis store tests",
};
export const DOVECOT: TestServer = {
  binary: "dovecot",
  package: "dovecot-imapd",
  suites: "the IMAP mailbox tests",
};
export const CHROMIUM: TestServer = {
  binary: "chromium",
  package: "chromium",
  suites: "the inspector's browser tests",
};
const SERVERS = [REDIS, DOVECOT, CHROMIUM];

/**
 * The path of `binary` in a directory of `env.PATH`, or in the `sbin` beside one: dovecot lives in /usr/sbin, which
 * is often not on a user's PATH. Only PATH decides, so a run (or a test) with another PATH sees another machine.
 */
export function findBinary(binary: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
  for (const dir of dirs.flatMap((dir) =>
    /\/bin$/.test(dir) ? [dir, dir.replace(/bin$/, "sbin")] : [dir],
  )) {
    const file = path.join(dir, binary);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/**
 * Why the suites that need `server` skip, or undefined when they run. Locally a missing server skips them; in CI
 * (`CI` set) they always run, so a missing server fails loudly instead of passing silently.
 */
export function skipReason(server: TestServer, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (findBinary(server.binary, env) !== undefined || env.CI) return undefined;
  return `${server.binary} is not installed (apt-get install -y ${server.package}); these tests run in CI`;
}

/** The line that ends a run which skipped suites for want of a server, or undefined when nothing was skipped. */
export function skippedServersLine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const missing = SERVERS.filter((server) => skipReason(server, env) !== undefined);
  if (missing.length === 0) return undefined;
  const names = (pick: (server: TestServer) => string) => missing.map(pick).join(" and ");
  return (
    `skipped ${names((server) => server.suites)}: ${names((server) => server.binary)} not installed ` +
    `(apt-get install ${missing.map((server) => server.package).join(" ")}); CI installs them`
  );
}

/** @module A run without redis-server or dovecot says what it skipped and how to install them; under CI nothing is skipped. */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir } from "./helpers/cli.js";
import { DOVECOT, findBinary, REDIS, skippedServersLine, skipReason } from "./helpers/test-servers.js";

afterEach(cleanupCli);

/** A PATH of empty `bin` dirs, with a stand-in executable for each of `binaries` (`sbin/<name>` lands beside one). */
function pathWith(...binaries: string[]): string {
  const root = makeTempDir("hooks-path-");
  const bin = path.join(root, "usr", "bin");
  mkdirSync(bin, { recursive: true });
  for (const binary of binaries) {
    const file = path.join(root, "usr", binary);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "#!/bin/sh\n");
    chmodSync(file, 0o755);
  }
  return bin;
}

describe("the servers some suites need", () => {
  it("are found on PATH, and in the sbin beside a bin on PATH", () => {
    const bin = pathWith("bin/redis-server", "sbin/dovecot");
    expect(findBinary("redis-server", { PATH: bin })).toBe(path.join(bin, "redis-server"));
    expect(findBinary("dovecot", { PATH: bin })).toBe(path.join(path.dirname(bin), "sbin", "dovecot"));
    expect(findBinary("dovecot", { PATH: pathWith() })).toBeUndefined();
  });

  it("missing, end the run with one line naming what was skipped and the apt-get line that installs them", () => {
    expect(skippedServersLine({ PATH: pathWith() })).toBe(
      "skipped the Redis store tests and the IMAP mailbox tests and the inspector's browser tests: redis-server " +
        "and dovecot and chromium not installed (apt-get install redis-server dovecot-imapd chromium); CI installs them",
    );
    expect(skippedServersLine({ PATH: pathWith("bin/redis-server", "bin/chromium") })).toBe(
      "skipped the IMAP mailbox tests: dovecot not installed (apt-get install dovecot-imapd); CI installs them",
    );
    expect(skipReason(DOVECOT, { PATH: pathWith() })).toMatch(/apt-get install -y dovecot-imapd/);
  });

  it("present, or missing under CI, skip nothing: in CI a missing server fails its suites", () => {
    expect(
      skippedServersLine({ PATH: pathWith("bin/redis-server", "sbin/dovecot", "bin/chromium") }),
    ).toBeUndefined();
    expect(skippedServersLine({ PATH: pathWith(), CI: "true" })).toBeUndefined();
    expect(skipReason(REDIS, { PATH: pathWith(), CI: "1" })).toBeUndefined();
  });
});

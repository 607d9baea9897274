/** @module The CLI's contract: help for every command, exit 2 for usage errors, exit 1 for failures; in-process, and through the real binary. */

import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { baseConfig, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli, runCliProcess } from "../helpers/cli.js";

afterEach(cleanupCli);

describe("hooks CLI", () => {
  it.each([
    [["--help"], /Usage: hooks/],
    [["serve", "--help"], /--state-dir <dir>[\s\S]*--record <file>/],
    [["check", "--help"], /Usage: hooks check/],
    [["token", "--help"], /Usage: hooks token/],
    [["mailbox", "--help"], /Usage: hooks mailbox/],
    [["help", "serve"], /Usage: hooks serve/],
  ])("%j prints help and exits 0", async (args, usage) => {
    const result = await runCli(args);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(usage);
  });

  it.each([
    [["serve", "--bogus"], /unknown option '--bogus'/],
    [["check", "--nope"], /unknown option '--nope'/],
    [["serve", "--port", "http"], /must be a port number/],
    [["serve", "--port", "70000"], /must be a port number/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [[], /Usage: hooks/],
  ])("%j is a usage error: exit 2", async (args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it("token prints a fresh 32-byte base64url token", async () => {
    const [a, b] = await Promise.all([runCli(["token"]), runCli(["token"])]);
    expect(a.code).toBe(0);
    expect(a.stdout.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.stdout).not.toBe(b.stdout);
  });

  it("serve with an invalid config lists every problem with its path and exits 1 without listening", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, {
      hooks: { enabled: true, token: "" },
      server: { port: -1 },
      runner: { kind: "telepathy" },
      session: { lastRoute: { channel: "pager" } },
    });
    const result = await runCli(["serve", "--config", config]);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(/listening/);
    for (const problem of ["hooks.token:", "server.port:", "runner.kind:", "session.lastRoute.channel:"]) {
      expect(result.stderr).toContain(problem);
    }
  });

  it("serve on a port already taken exits 1 with a message naming the problem", async () => {
    const blocker = createServer();
    blocker.listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const { port } = blocker.address() as AddressInfo;
    try {
      const dir = makeTempDir();
      const result = await runCli([
        "serve",
        "--config",
        writeConfig(dir, baseConfig()),
        "--port",
        String(port),
        "--state-dir",
        dir,
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });
});

// The binary's own wiring: bin/hooks.js on the built dist/, its exit code and output as a shell sees them.
describe("the hooks binary", () => {
  it("checks a good config: exit 0, ok on stdout", async () => {
    const dir = makeTempDir();
    const result = await runCliProcess(["check", "--config", writeConfig(dir, baseConfig())]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("ok: config is valid");
    expect(result.code).toBe(0);
  });

  it("exits 1 for a config it refuses and 2 for a usage error, the reason on stderr", async () => {
    const dir = makeTempDir();
    const refused = await runCliProcess([
      "check",
      "--config",
      writeConfig(dir, { hooks: { enabled: true, token: "" } }),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("hooks.token:");
    const usage = await runCliProcess(["frobnicate"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});

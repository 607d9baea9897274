/** @module `hooks mailbox setup`: the config edit (unit) and the command, with and without a test login against dovecot. */
import { once } from "node:events";
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { Command, CommanderError } from "commander";
import JSON5 from "json5";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { registerMailboxCommand } from "../../src/cli/mailbox.js";
import { applyMailboxSetup, SetupConfigError } from "../../src/mailbox/setup-config.js";
import { type DovecotServer, dovecotSkipReason, startDovecot } from "../helpers/dovecot.js";

const FIXED_TOKEN = "generated-token-000000000000000000000000000";

describe("applyMailboxSetup", () => {
  const input = { host: "imap.example.org", user: "me@example.org", passwordEnv: "IMAP_PASSWORD" };

  it("fills an empty config: mailbox block, hooks enabled, preset added, token created", () => {
    const result = applyMailboxSetup({}, input, () => FIXED_TOKEN);
    expect(result.config).toEqual({
      hooks: {
        mailbox: {
          host: "imap.example.org",
          port: 993,
          user: "me@example.org",
          security: "tls",
          passwordEnv: "IMAP_PASSWORD",
          mailbox: "INBOX",
          includeBody: false,
          maxBytes: 20_000,
        },
        enabled: true,
        presets: ["mailbox"],
        token: FIXED_TOKEN,
      },
    });
    expect(result.tokenCreated).toBe(true);
    expect(result.changes).toContain('hooks.mailbox.host: "imap.example.org"');
    expect(result.changes).toContain('hooks.presets: added "mailbox"');
    expect(result.changes.join("\n")).not.toContain(FIXED_TOKEN);
  });

  it("keeps everything else, including ${VAR} strings and unrelated mailbox fields", () => {
    const original = {
      gateway: { auth: { token: "${GATEWAY_TOKEN}" } },
      agents: { defaults: { models: ["openai/gpt-4o"] } },
      hooks: {
        enabled: true,
        token: "${HOOKS_TOKEN}",
        path: "/in",
        presets: [],
        mappings: [{ match: { path: "github" }, action: "wake", textTemplate: "push" }],
        mailbox: {
          host: "old",
          user: "old",
          passwordFile: "secret.txt",
          model: "openai/gpt-4o",
          pollSeconds: 30,
        },
      },
    };
    const snapshot = structuredClone(original);
    const result = applyMailboxSetup(original, { ...input, security: "starttls" }, () => FIXED_TOKEN);
    expect(original).toEqual(snapshot);
    expect(result.tokenCreated).toBe(false);
    expect(result.config).toMatchObject({
      gateway: snapshot.gateway,
      agents: snapshot.agents,
      hooks: {
        enabled: true,
        token: "${HOOKS_TOKEN}",
        path: "/in",
        presets: ["mailbox"],
        mappings: snapshot.hooks.mappings,
        mailbox: {
          host: "imap.example.org",
          port: 143,
          security: "starttls",
          model: "openai/gpt-4o",
          pollSeconds: 30,
        },
      },
    });
    // A new password source replaces the old one rather than leaving two.
    expect(result.mailbox).not.toHaveProperty("passwordFile");
    expect(result.changes).toContain('hooks.mailbox.passwordFile: removed (was "secret.txt")');
  });

  it("changes nothing when run twice with the same flags", () => {
    const once = applyMailboxSetup({}, input, () => FIXED_TOKEN);
    const twice = applyMailboxSetup(once.config, input, () => "another-token");
    expect(twice.config).toEqual(once.config);
    expect(twice.changes).toEqual([]);
  });

  it("refuses configs it cannot edit safely, and a setup without a password source", () => {
    expect(() => applyMailboxSetup({ hooks: [] }, input, () => FIXED_TOKEN)).toThrow(SetupConfigError);
    expect(() => applyMailboxSetup({ hooks: { presets: "mailbox" } }, input, () => FIXED_TOKEN)).toThrow(
      /hooks.presets must be an array/,
    );
    expect(() => applyMailboxSetup({}, { host: "h", user: "u" }, () => FIXED_TOKEN)).toThrow(
      /--password-env or --password-file/,
    );
  });
});

interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

async function runSetup(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  let exitCode = 0;
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const program = new Command("hooks").exitOverride().configureOutput({
    writeOut: (text) => {
      stdout += text;
    },
    writeErr: (text) => {
      stderr += text;
    },
  });
  registerMailboxCommand(program, {
    stdout: sink((text) => {
      stdout += text;
    }),
    stderr: sink((text) => {
      stderr += text;
    }),
    env,
    setExitCode: (code) => {
      exitCode = code;
    },
  });
  try {
    await program.parseAsync(["mailbox", "setup", ...args], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // As src/cli/main.ts maps it: every commander error other than help is a usage error.
    exitCode = error.code.startsWith("commander.help") ? 0 : 2;
  }
  return { exitCode, stdout, stderr };
}

describe("hooks mailbox setup", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hooks-setup-"));
    return () => rm(dir, { recursive: true, force: true });
  });

  const base = ["--host", "imap.example.org", "--user", "me", "--no-verify"];

  it("creates a private config with the mailbox block and a token, and never the password", async () => {
    const file = path.join(dir, "gateway.json5");
    const run = await runSetup([...base, "--password-env", "IMAP_PW", "--config", file, "--include-body"], {
      IMAP_PW: "hunter2-secret",
    });
    expect(run).toMatchObject({ exitCode: 0, stderr: "" });
    const text = await readFile(file, "utf8");
    const config = JSON5.parse(text);
    expect(config.hooks).toMatchObject({
      enabled: true,
      presets: ["mailbox"],
      mailbox: { host: "imap.example.org", user: "me", passwordEnv: "IMAP_PW", includeBody: true },
    });
    expect(config.hooks.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(text).not.toContain("hunter2");
    expect(run.stdout).not.toContain(config.hooks.token);
    expect(run.stdout).toMatch(/Created .*gateway\.json5/);
    expect(run.stdout).toContain("hooks.token: created");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("updates an existing JSON5 file in place, keeping the rest and a .bak of the original", async () => {
    const file = path.join(dir, "gateway.json5");
    const original = `// my gateway
{
  gateway: { auth: { token: "\${GATEWAY_TOKEN}" } },
  hooks: { token: "\${HOOKS_TOKEN}", path: "/in", mappings: [{ match: { path: "ci" }, action: "wake", textTemplate: "ci" }] },
  channels: ["telegram"], // trailing comma follows
}
`;
    await writeFile(file, original, { mode: 0o644 });
    // A backup left by an earlier run, readable by everyone.
    await writeFile(`${file}.bak`, "old backup", { mode: 0o644 });
    await chmod(`${file}.bak`, 0o644);
    const secretDir = path.join(dir, "secrets");
    const run = await runSetup([
      ...base,
      "--password-file",
      path.join(secretDir, "imap.txt"),
      "--config",
      file,
    ]);
    expect(run.exitCode).toBe(0);
    const config = JSON5.parse(await readFile(file, "utf8"));
    expect(config).toMatchObject({
      gateway: { auth: { token: "${GATEWAY_TOKEN}" } },
      channels: ["telegram"],
      hooks: {
        token: "${HOOKS_TOKEN}",
        path: "/in",
        mappings: [{ match: { path: "ci" }, action: "wake", textTemplate: "ci" }],
        enabled: true,
        presets: ["mailbox"],
        // Stored relative to the config file, which is how `run` reads it.
        mailbox: { passwordFile: path.join("secrets", "imap.txt") },
      },
    });
    expect(await readFile(`${file}.bak`, "utf8")).toBe(original);
    // The file holds a token from now on: tightened to 0600, the backup (which may hold one too) with it.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(`${file}.bak`)).mode & 0o777).toBe(0o600);
    expect(run.stdout).toMatch(/Updated .*gateway\.json5/);
    expect(run.stdout).toMatch(/comments and formatting were not kept.*gateway\.json5\.bak/);
    expect(run.stdout).not.toContain("hooks.token: created");
    expect(run.stdout).toMatch(/password file .* does not exist yet/);
  });

  it.each([
    ["600", "600"],
    ["640", "600"],
    ["666", "600"],
    ["400", "400"],
  ])(
    "rewrites a config of mode %s with mode %s: kept or tightened, never loosened",
    async (before, expected) => {
      const file = path.join(dir, "gateway.json5");
      const after = Number.parseInt(expected, 8);
      await writeFile(file, "{}\n");
      await chmod(file, Number.parseInt(before, 8));
      const run = await runSetup([...base, "--password-env", "IMAP_PW", "--config", file]);
      expect(run.exitCode).toBe(0);
      expect(JSON5.parse(await readFile(file, "utf8")).hooks.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await stat(file)).mode & 0o777).toBe(after);
      expect((await stat(`${file}.bak`)).mode & 0o777).toBe(after);
    },
  );

  it.each([
    [["--password-env", "A", "--password-file", "b"], /only one of --password-env and --password-file/],
    [["--password-env", "A", "--tls", "--starttls"], /only one of --tls, --starttls and --no-tls/],
    [["--password-env", "A", "--port", "99999"], /must be an integer from 1 to 65535/],
    [["--password-env", "A", "--hook-url", "ftp://x"], /--hook-url must be an http/],
    [[], /--password-env or --password-file/],
  ])("rejects bad usage %j with exit 2", async (extra, message) => {
    const file = path.join(dir, "gateway.json5");
    const run = await runSetup([...base, "--config", file, ...extra]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(message);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it("skips the login with --no-verify: no connection to the server, the config written", async () => {
    // Needs no IMAP server, so it runs everywhere: a plain listener shows that nothing connects.
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    listener.listen(0, "127.0.0.1");
    await once(listener, "listening");
    try {
      const file = path.join(dir, "unverified.json5");
      const port = String((listener.address() as AddressInfo).port);
      const run = await runSetup(
        [
          "--host",
          "127.0.0.1",
          "--port",
          port,
          "--no-tls",
          "--user",
          "vera",
          "--password-env",
          "VERA_PW",
        ].concat(["--config", file, "--no-verify"]),
        { VERA_PW: "wrong-password" },
      );
      expect(run).toMatchObject({ exitCode: 0, stderr: "" });
      expect(run.stdout).not.toContain("Verified");
      expect(JSON5.parse(await readFile(file, "utf8")).hooks.mailbox).toMatchObject({
        host: "127.0.0.1",
        port: Number(port),
        user: "vera",
        security: "none",
      });
      expect(connections).toBe(0);
    } finally {
      listener.close();
    }
  });

  it("leaves an unreadable config untouched (exit 1)", async () => {
    const file = path.join(dir, "gateway.json5");
    await writeFile(file, "{ hooks: ");
    const run = await runSetup([...base, "--password-env", "A", "--config", file]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/not valid JSON5.*nothing was changed/);
    expect(await readFile(file, "utf8")).toBe("{ hooks: ");
  });
});

const skipReason = dovecotSkipReason();

describe.skipIf(skipReason !== undefined)(
  `hooks mailbox setup verifying against dovecot${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let server: DovecotServer;
    let dir: string;
    beforeAll(async () => {
      server = await startDovecot();
      await server.addUser("vera", "right-password");
      dir = await mkdtemp(path.join(os.tmpdir(), "hooks-setup-verify-"));
    });
    afterAll(async () => {
      await server?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const args = (file: string, ...extra: string[]) => [
      "--host",
      server.host,
      "--port",
      String(server.port),
      "--no-tls",
      "--user",
      "vera",
      "--password-env",
      "VERA_PW",
      "--config",
      file,
      ...extra,
    ];

    it("logs in, opens the mailbox, then writes the config", async () => {
      const file = path.join(dir, "ok.json5");
      const run = await runSetup(args(file), { VERA_PW: "right-password" });
      expect(run.stderr).toBe("");
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(/Verified: logged in to 127\.0\.0\.1:\d+ as vera and opened "INBOX"/);
      expect(JSON5.parse(await readFile(file, "utf8")).hooks.mailbox).toMatchObject({
        port: server.port,
        security: "none",
        passwordEnv: "VERA_PW",
      });
    });

    it("writes nothing when the mailbox does not exist or the password is not set", async () => {
      const file = path.join(dir, "missing.json5");
      const missing = await runSetup(args(file, "--mailbox", "Nope"), { VERA_PW: "right-password" });
      expect(missing.exitCode).toBe(1);
      expect(missing.stderr).toMatch(/verification failed: cannot open mailbox "Nope"/);
      const unset = await runSetup(args(file), {});
      expect(unset.exitCode).toBe(1);
      expect(unset.stderr).toMatch(/environment variable VERA_PW .* is not set/);
      await expect(stat(file)).rejects.toThrow(/ENOENT/);
    });

    // Last on purpose: dovecot slows down the next logins from an address after a failed one.
    it("exits 1 with a clear message on a wrong password, leaving the config as it was", async () => {
      const file = path.join(dir, "bad.json5");
      await writeFile(file, "{ keep: true }\n");
      const run = await runSetup(args(file), { VERA_PW: "wrong-password" });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(
        /verification failed: the IMAP server 127\.0\.0\.1:\d+ refused the login for vera: check the user name and password/,
      );
      expect(run.stderr).toMatch(/Nothing was written.*--no-verify/s);
      expect(run.stderr + run.stdout).not.toContain("wrong-password");
      expect(await readFile(file, "utf8")).toBe("{ keep: true }\n");
    });
  },
);

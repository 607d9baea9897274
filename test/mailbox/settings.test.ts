/** @module Tests of how `hooks mailbox run` reads its settings and the password from the gateway config. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localGatewayOrigin, readPassword, resolveMailboxSettings } from "../../src/mailbox/settings.js";

const configDir = "/etc/gateway";
const withMailbox = (mailbox: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...extra,
  hooks: {
    enabled: true,
    token: "t".repeat(32),
    presets: ["mailbox"],
    ...(extra["hooks"] as object | undefined),
    mailbox: { host: "imap.example.org", user: "me", passwordEnv: "PW", ...mailbox },
  },
});

describe("resolveMailboxSettings", () => {
  it("derives the hook URL from hooks.path and the gateway's server address when hookUrl is unset", () => {
    const plain = resolveMailboxSettings(withMailbox({}), configDir);
    expect(plain.ok && plain.settings.hookUrl).toBe("http://127.0.0.1:18789/hooks/mailbox");
    const custom = resolveMailboxSettings(
      withMailbox({}, { hooks: { path: "intake/" }, server: { host: "0.0.0.0", port: 9000 } }),
      configDir,
    );
    expect(custom.ok && custom.settings.hookUrl).toBe("http://127.0.0.1:9000/intake/mailbox");
    const explicit = resolveMailboxSettings(
      withMailbox({ hookUrl: "https://gw.example.org/h/mailbox" }),
      configDir,
    );
    expect(explicit.ok && explicit.settings.hookUrl).toBe("https://gw.example.org/h/mailbox");
  });

  it("fills defaults: port by security, INBOX, 60 s poll, 20000-byte bodies off", () => {
    const result = resolveMailboxSettings(withMailbox({ security: "starttls" }), configDir);
    expect(result.ok && result.settings).toMatchObject({
      account: { port: 143, security: "starttls", mailbox: "INBOX", password: { kind: "env", name: "PW" } },
      includeBody: false,
      maxBytes: 20_000,
      pollSeconds: 60,
    });
    const tls = resolveMailboxSettings(withMailbox({}), configDir);
    expect(tls.ok && tls.settings.account.port).toBe(993);
  });

  it("resolves a relative password file against the config file's directory", () => {
    const result = resolveMailboxSettings(
      withMailbox({ passwordEnv: undefined, passwordFile: "imap.pw" }),
      configDir,
    );
    expect(result.ok && result.settings.account.password).toEqual({
      kind: "file",
      path: "/etc/gateway/imap.pw",
    });
  });

  it.each([
    [{ hooks: { enabled: true, token: "x".repeat(30) } }, "hooks.mailbox", /hooks mailbox setup/],
    [withMailbox({ host: undefined }), "hooks.mailbox.host", /required/],
    [withMailbox({ passwordEnv: undefined }), "hooks.mailbox", /passwordEnv .* or passwordFile/],
    [withMailbox({ passwordFile: "x" }), "hooks.mailbox", /only one of passwordEnv and passwordFile/],
    [withMailbox({ hookUrl: "ftp://x" }), "hooks.mailbox.hookUrl", /http/],
    [withMailbox({}, { server: { port: 0 } }), "hooks.mailbox.hookUrl", /server.port is 0/],
    [withMailbox({ colour: "red" }), "hooks.mailbox.colour", /unknown key/],
  ])("reports an unusable config (%#) at %s", (config, at, message) => {
    const result = resolveMailboxSettings(config, configDir);
    expect(result.ok).toBe(false);
    const issue = result.ok ? undefined : result.issues.find((candidate) => candidate.path === at);
    expect(issue?.message).toMatch(message);
  });

  it("warns when the local gateway would not accept the helper", () => {
    const result = resolveMailboxSettings(withMailbox({}, { hooks: { presets: [] } }), configDir);
    expect(result.ok && result.warnings.join("\n")).toMatch(/does not contain "mailbox"/);
  });
});

describe("localGatewayOrigin", () => {
  it.each([
    [undefined, "http://127.0.0.1:18789"],
    [{ host: "::", port: 80 }, "http://[::1]:80"],
    [{ host: "fe80::1", port: 81 }, "http://[fe80::1]:81"],
    [{ host: "gw.local" }, "http://gw.local:18789"],
    [{ port: 0 }, undefined],
  ])("%j → %s", (server, origin) => {
    expect(localGatewayOrigin(server)).toBe(origin);
  });
});

describe("readPassword", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hooks-password-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads the variable, or the file without its final newline", async () => {
    expect(await readPassword({ kind: "env", name: "PW" }, { PW: "s3cret" })).toBe("s3cret");
    const file = path.join(dir, "pw");
    await writeFile(file, "with space \n");
    expect(await readPassword({ kind: "file", path: file })).toBe("with space ");
  });

  it("names the missing variable or file, never a value", async () => {
    await expect(readPassword({ kind: "env", name: "PW" }, {})).rejects.toThrow(/environment variable PW/);
    await expect(readPassword({ kind: "file", path: path.join(dir, "none") })).rejects.toThrow(/ENOENT/);
    const empty = path.join(dir, "empty");
    await writeFile(empty, "\n");
    await expect(readPassword({ kind: "file", path: empty })).rejects.toThrow(/is empty/);
  });
});

/** @module `hooks serve` and `hooks check` with secrets in files and variables: requests authenticated, problems named, values never printed. */
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, runCli, startServe } from "../helpers/cli.js";
import { postJson, serveArgs, writeConfig } from "./support.js";

afterEach(cleanupCli);

const TOKEN = "serve-token-from-a-file-0123456789ab";
const METRICS_TOKEN = "metrics-token-from-the-env-0123456789";
const INSPECTOR_KEY = "inspector-key-from-a-file-0123456789";
const SIGNING = "github-secret-from-a-file-0123456789";

function secretFile(dir: string, name: string, text: string, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, `${text}\n`);
  chmodSync(file, mode);
  return file;
}

/** The config of these tests: every secret of the file in a file or a variable, relative paths included. */
function secretConfig(dir: string): string {
  return writeConfig(dir, {
    hooks: {
      enabled: true,
      token: { file: "hook-token" },
      mappings: [
        {
          id: "github",
          match: { path: "github" },
          action: "wake",
          textTemplate: "push",
          verify: { scheme: "github", secret: { file: "github-secret" } },
        },
      ],
    },
    server: {
      metricsToken: { env: "SECRETS_TEST_METRICS_TOKEN" },
      inspector: { key: { file: "inspector-key" } },
    },
  });
}

function writeSecrets(dir: string, tokenMode = 0o600): void {
  secretFile(dir, "hook-token", TOKEN, tokenMode);
  secretFile(dir, "github-secret", SIGNING);
  secretFile(dir, "inspector-key", INSPECTOR_KEY);
}

const env = { SECRETS_TEST_METRICS_TOKEN: METRICS_TOKEN };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("hooks serve with secrets in files and the environment", () => {
  it("authenticates with the token read from a file, guards /metrics with the one from the environment, prints none", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const gateway = await startServe(serveArgs(dir, secretConfig(dir)).args, { env });

    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "from a file" }, bearer(TOKEN))).status).toBe(
      200,
    );
    const wrong = await postJson(
      `${gateway.url}/hooks/wake`,
      { text: "x" },
      bearer("not-the-token-0123456789ab"),
    );
    expect(wrong.status).toBe(401);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gateway.url}/metrics`, { headers: bearer(METRICS_TOKEN) })).status).toBe(200);
    // A configured inspector key is referred to, never printed; it is the file's content that logs in.
    const inspector = /inspector: (\S+) \(log in with server\.inspector\.key\)/.exec(gateway.stdout())![1]!;
    const logIn = (key: string) =>
      fetch(`${inspector}/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key }),
      });
    expect((await logIn(INSPECTOR_KEY)).status).toBe(200);
    expect((await logIn("not-the-inspector-key-0123456789")).status).toBe(401);
    for (const secret of [TOKEN, METRICS_TOKEN, INSPECTOR_KEY, SIGNING]) {
      expect(gateway.stdout()).not.toContain(secret);
      expect(gateway.stderr()).not.toContain(secret);
    }
  });

  it("the ready banner's curl line names a token read from { env } by its variable, a token from a file by its key", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const fromEnv = writeConfig(dir, { hooks: { enabled: true, token: { env: "SECRETS_TEST_HOOK_TOKEN" } } });
    const gateway = await startServe(serveArgs(dir, fromEnv).args, {
      env: { SECRETS_TEST_HOOK_TOKEN: TOKEN },
    });
    expect(gateway.stdout()).toContain('"Authorization: Bearer $SECRETS_TEST_HOOK_TOKEN"');
    expect(gateway.stdout()).not.toContain(TOKEN);
  });

  it("reads the token file again when the config is saved again, and names the token as changed", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const config = secretConfig(dir);
    const gateway = await startServe(serveArgs(dir, config).args, { env });
    const ROTATED = "rotated-token-from-a-file-0123456789";
    secretFile(dir, "hook-token", ROTATED);
    // The secret files are not watched: saving the config (or SIGHUP) is what reads them again.
    secretConfig(dir);
    const line = await gateway.waitForLog((r) => String(r.msg).startsWith("config reloaded"));
    expect(line.msg).toContain("changed: hooks.token");
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "new" }, bearer(ROTATED))).status).toBe(200);
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "old" }, bearer(TOKEN))).status).toBe(401);
    expect(gateway.stdout()).not.toContain(ROTATED);
  });
});

describe("hooks replay --send with the token in a file", () => {
  it("sends with the token the file holds", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const config = secretConfig(dir);
    const gateway = await startServe(serveArgs(dir, config).args, { env });
    const fixture = path.join(dir, "wake.json5");
    writeFileSync(
      fixture,
      JSON.stringify({ name: "wake", request: { path: "wake", body: { text: "replayed" } } }),
    );
    const sent = await runCli(["replay", "--config", config, "--send", gateway.url, fixture], { env });
    expect(sent.stdout).toMatch(/wake: 200/);
  });
});

describe("hooks check with secrets in files and the environment", () => {
  it("checks them, listing the signed mapping, without printing any", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const result = await runCli(["check", "--config", secretConfig(dir)], { env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/github\s.*github/);
    for (const secret of [TOKEN, METRICS_TOKEN, INSPECTOR_KEY, SIGNING])
      expect(result.stdout).not.toContain(secret);
  });

  it("refuses a token file others may read, naming the field, the file and the fix; and an unset variable, in the same round", async () => {
    const dir = makeTempDir();
    writeSecrets(dir, 0o644);
    const token = path.join(dir, "hook-token");
    const result = await runCli(["check", "--config", secretConfig(dir)], {
      env: { SECRETS_TEST_METRICS_TOKEN: undefined },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `hooks.token: ${token} may be read or written by other users, so the secret in it is not kept (chmod 600 ${token}, or 640 to share it with the file's group)`,
    );
    expect(result.stderr).toContain(
      "server.metricsToken: environment variable SECRETS_TEST_METRICS_TOKEN is not set",
    );
    expect(result.stderr).toMatch(/^2 problem\(s\)/);
    expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
  });

  it("a secret's { env } may not be handed to transform workers", async () => {
    const dir = makeTempDir();
    writeSecrets(dir);
    const config = writeConfig(dir, {
      hooks: {
        enabled: true,
        token: { env: "SECRETS_TEST_HOOK_TOKEN" },
        transforms: { env: ["SECRETS_TEST_HOOK_TOKEN"] },
      },
    });
    const result = await runCli(["check", "--config", config], { env: { SECRETS_TEST_HOOK_TOKEN: TOKEN } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "hooks.transforms.env[0]: names SECRETS_TEST_HOOK_TOKEN, which hooks.token uses for a secret",
    );
  });
});

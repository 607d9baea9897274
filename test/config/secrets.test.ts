/** @module Secret fields written as `{ file }` or `{ env }`: read from real files (real modes) and the environment, every problem named, no value shown. */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatIssue } from "../../src/config/issues.js";
import { createHooksPlugin } from "../../src/index.js";
import { prepareHooks } from "../../src/prepare-hooks.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "token-from-a-file-0123456789abcdef";
const SIGNING = "signing-secret-from-a-file-0123456789";
const ROTATED = "the-previous-signing-secret-9876543210";
const REDIS_URL = "redis://hooks:s3cret-password@127.0.0.1:6399/2";

const dirs: string[] = [];
const hosts: TestHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-secrets-"));
  dirs.push(dir);
  return dir;
}

/** A file holding `text` (with the newline an editor leaves) in `dir`, with `mode`. */
function secretFile(dir: string, name: string, text: string, mode = 0o600): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${text}\n`);
  // Set after writing: the umask would otherwise decide.
  chmodSync(file, mode);
  return file;
}

function prepare(hooks: Record<string, unknown>, dir: string, env: NodeJS.ProcessEnv = {}, rest = {}) {
  return prepareHooks({ ...rest, hooks: { enabled: true, token: TOKEN, ...hooks } }, { configDir: dir, env });
}

const githubMapping = (verify: Record<string, unknown>) => ({
  id: "github",
  match: { path: "github" },
  action: "wake",
  textTemplate: "push",
  verify: { scheme: "github", ...verify },
});

describe("secret fields: the three forms", () => {
  it.each([
    ["text", (_dir: string) => TOKEN, {}],
    ["{ file } (absolute)", (dir: string) => ({ file: secretFile(dir, "token", TOKEN) }), {}],
    ["{ env }", (_dir: string) => ({ env: "MY_HOOK_TOKEN" }), { MY_HOOK_TOKEN: TOKEN }],
  ])("the hook token as %s", (_form, token, env) => {
    const dir = tempDir();
    const result = prepare({ token: token(dir) }, dir, env);
    expect(result.issues).toEqual([]);
    expect(result.prepared!.config.token).toBe(TOKEN);
  });

  it("a { file } path without a leading / is relative to the config file's directory, not the working directory", () => {
    const dir = tempDir();
    secretFile(dir, "secrets/hook-token", TOKEN);
    const result = prepare({ token: { file: "secrets/hook-token" } }, dir);
    expect(result.issues).toEqual([]);
    expect(result.prepared!.config.token).toBe(TOKEN);
  });

  it("a signing secret and every secret of a rotation list, each in its own form", () => {
    const dir = tempDir();
    secretFile(dir, "github-secret", SIGNING);
    const one = prepare({ mappings: [githubMapping({ secret: { file: "github-secret" } })] }, dir);
    expect(one.issues).toEqual([]);
    expect(one.prepared!.signedPaths.get("github")!.settings.secrets).toEqual([SIGNING]);

    const rotation = prepare(
      { mappings: [githubMapping({ secrets: [{ env: "GITHUB_NEW" }, { file: "github-secret" }, ROTATED] })] },
      dir,
      { GITHUB_NEW: "the-new-signing-secret-0123456789" },
    );
    expect(rotation.issues).toEqual([]);
    expect(rotation.prepared!.signedPaths.get("github")!.settings.secrets).toEqual([
      "the-new-signing-secret-0123456789",
      SIGNING,
      ROTATED,
    ]);
  });

  it.each([
    ["{ file }", (dir: string) => ({ file: secretFile(dir, "redis-url", REDIS_URL) }), {}],
    ["{ env }", () => ({ env: "REDIS_URL" }), { REDIS_URL }],
  ])("the store URL as %s, its password shown nowhere", (_form, url, env) => {
    const dir = tempDir();
    const result = prepare({ store: { kind: "redis", url: url(dir) } }, dir, env);
    expect(result.issues).toEqual([]);
    expect(result.prepared!.config.store).toMatchObject({ kind: "redis", url: REDIS_URL });
  });

  it("the content read must still be a valid value of its field: a file that holds no Redis URL is refused, unquoted", () => {
    const dir = tempDir();
    const file = secretFile(dir, "redis-url", "s3cret-password");
    const issues = prepare({ store: { kind: "redis", url: { file } } }, dir).issues.map(formatIssue);
    expect(issues).toEqual([
      expect.stringMatching(/^hooks\.store\.url: must be a redis:\/\/ or rediss:\/\/ URL/),
    ]);
    expect(issues.join("\n")).not.toContain("s3cret-password");
  });

  it("gateway.auth.token is read too: a hook token equal to it is refused", () => {
    const dir = tempDir();
    const result = prepare(
      { token: { file: secretFile(dir, "token", TOKEN) } },
      dir,
      { GATEWAY_TOKEN: TOKEN },
      {
        gateway: { auth: { token: { env: "GATEWAY_TOKEN" } } },
      },
    );
    expect(result.issues.map(formatIssue)).toEqual([
      "hooks.token: must differ from gateway.auth.token: the hook token is a dedicated secret",
    ]);
  });

  it("the file is read again at each load", () => {
    const dir = tempDir();
    const file = secretFile(dir, "token", TOKEN);
    expect(prepare({ token: { file } }, dir).prepared!.config.token).toBe(TOKEN);
    secretFile(dir, "token", "a-rotated-token-0123456789abcdefgh");
    expect(prepare({ token: { file } }, dir).prepared!.config.token).toBe(
      "a-rotated-token-0123456789abcdefgh",
    );
  });
});

describe("secret fields: what is refused", () => {
  it.each([0o644, 0o604, 0o602, 0o606])(
    "a file other users may read or write (mode %o), naming the field and the file and how to fix it",
    (mode) => {
      const dir = tempDir();
      const file = secretFile(dir, "token", TOKEN, mode);
      const issues = prepare({ token: { file: "token" } }, dir).issues;
      expect(issues.map(formatIssue)).toEqual([
        `hooks.token: ${file} may be read or written by other users, so the secret in it is not kept (chmod 600 ${file}, or 640 to share it with the file's group)`,
      ]);
    },
  );

  it.each([0o640, 0o660, 0o400])("a file its group may read or write is allowed (mode %o)", (mode) => {
    const dir = tempDir();
    const result = prepare({ token: { file: secretFile(dir, "token", TOKEN, mode) } }, dir);
    expect(result.issues).toEqual([]);
    expect(result.prepared!.config.token).toBe(TOKEN);
  });

  it("a missing file, a directory and an empty file, each naming its field and its file", () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "a-directory"));
    secretFile(dir, "empty", "");
    const issues = prepare(
      {
        token: { file: "missing" },
        mappings: [githubMapping({ secrets: [{ file: "a-directory" }, { file: "empty" }] })],
      },
      dir,
    ).issues.map(formatIssue);
    expect(issues).toEqual([
      `hooks.token: ${path.join(dir, "missing")} does not exist`,
      `hooks.mappings[0].verify.secrets[0]: ${path.join(dir, "a-directory")} is a directory: name the file that holds the secret`,
      `hooks.mappings[0].verify.secrets[1]: ${path.join(dir, "empty")} is empty`,
    ]);
  });

  it("a FIFO (which would hang the load) and a file too large to be a secret are refused, naming them", () => {
    const dir = tempDir();
    execFileSync("mkfifo", ["-m", "600", path.join(dir, "a-fifo")]);
    secretFile(dir, "large", "x".repeat(100 * 1024));
    const issues = prepare(
      { token: { file: "a-fifo" }, store: { kind: "redis", url: { file: "large" } } },
      dir,
    ).issues.map(formatIssue);
    expect(issues).toEqual([
      `hooks.token: ${path.join(dir, "a-fifo")} is not a regular file: name the file that holds the secret`,
      `hooks.store.url: ${path.join(dir, "large")} is larger than 65536 bytes: it does not look like a secret`,
    ]);
  });

  it.each([
    [{}, "environment variable HOOK_TOKEN_VAR is not set"],
    [{ HOOK_TOKEN_VAR: "" }, "environment variable HOOK_TOKEN_VAR is empty"],
  ])("a variable that is unset or empty (%o), naming the field and the variable", (env, message) => {
    const dir = tempDir();
    const issues = prepare({ token: { env: "HOOK_TOKEN_VAR" } }, dir, env).issues;
    expect(issues).toEqual([{ path: "hooks.token", message, variable: "HOOK_TOKEN_VAR" }]);
  });

  const SHAPE = 'hooks.token: must be a string, { "file": "<path>" } or { "env": "NAME" }';
  it.each([
    [{ fil: "token" }, SHAPE],
    [{ file: "token", env: "X" }, SHAPE],
    [42, SHAPE],
    [{ file: "" }, "hooks.token.file: must not be empty"],
    [{ env: "not a name" }, "hooks.token.env: must be an environment variable name (letters, digits, _)"],
  ])("a secret of another shape (%o) is one shape error, nothing read", (token, message) => {
    const dir = tempDir();
    expect(prepare({ token }, dir).issues.map(formatIssue)).toEqual([message]);
  });

  it("lists every problem in one round, each once, and never a value", () => {
    const dir = tempDir();
    const open = secretFile(dir, "open-token", TOKEN, 0o644);
    secretFile(dir, "empty-secret", "");
    const issues = prepare(
      {
        token: { file: "open-token" },
        store: { kind: "redis", url: { env: "REDIS_URL_UNSET" } },
        mappings: [githubMapping({ secret: { file: "empty-secret" } })],
        maxBodyBytes: 0,
      },
      dir,
    ).issues.map(formatIssue);
    expect(issues).toEqual([
      expect.stringMatching(new RegExp(`^hooks\\.token: ${open} may be read`)),
      `hooks.mappings[0].verify.secret: ${path.join(dir, "empty-secret")} is empty`,
      "hooks.store.url: environment variable REDIS_URL_UNSET is not set",
      "hooks.maxBodyBytes: must be at least 1",
    ]);
    expect(issues.join("\n")).not.toContain(TOKEN);
  });
});

describe("secret fields in a running plugin", () => {
  it("a request is authenticated with the token read from a file; the inspector hides that token where a sender put it", async () => {
    const dir = tempDir();
    secretFile(dir, "hook-token", TOKEN);
    const plugin = createHooksPlugin();
    const host = await startTestHost(
      plugin,
      { hooks: { enabled: true, token: { file: "hook-token" } } },
      { configDir: dir },
    );
    hosts.push(host);
    const post = (query: string, token: string) =>
      fetch(`${host.url}/hooks/wake${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "deploy finished" }),
      });
    expect((await post("", TOKEN)).status).toBe(200);
    expect((await post("", "not-the-token-but-long-enough-000")).status).toBe(401);
    expect((await post(`?code=${TOKEN}`, "not-the-token-but-long-enough-000")).status).toBe(401);

    const inspector = plugin.inspector()!;
    const rows = await inspector.list({});
    const details = await Promise.all(rows.map((row) => inspector.detail(row.id)));
    expect(details.map((detail) => detail?.query)).toContainEqual({ code: "[redacted]" });
    expect(JSON.stringify({ rows, details })).not.toContain(TOKEN);
  });

  it("a reload reads the file again, and names the token among the changed fields when only the file changed", async () => {
    const dir = tempDir();
    secretFile(dir, "hook-token", TOKEN);
    const config = { hooks: { enabled: true, token: { file: "hook-token" } } };
    const plugin = createHooksPlugin();
    const host = await startTestHost(plugin, config, { configDir: dir });
    hosts.push(host);
    const ROTATED_TOKEN = "a-rotated-token-0123456789abcdefgh";
    secretFile(dir, "hook-token", ROTATED_TOKEN);
    const reload = await plugin.prepareReload(config);
    expect(reload.issues).toEqual([]);
    expect(reload.changed).toEqual(["hooks.token"]);
    reload.apply();
    const wake = (token: string) =>
      fetch(`${host.url}/hooks/wake`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "after the rotation" }),
      });
    expect((await wake(ROTATED_TOKEN)).status).toBe(200);
    expect((await wake(TOKEN)).status).toBe(401);
  });
});

/** @module The OpenClaw adapter with the plugin's secrets in files (next to OpenClaw's config) and variables, on the stand-in API. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isConfigError } from "../../src/index.js";
import openclawPlugin from "../../src/openclaw/index.js";
import { fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { servePlugin } from "../helpers/openclaw-plugin-server.js";

const TOKEN = "openclaw-token-from-a-file-0123456789";
const KEY = "plugins.entries.hooks-intake.config";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  vi.unstubAllEnvs();
});

/** A directory holding OpenClaw's config file (named by OPENCLAW_CONFIG_PATH, as OpenClaw's own launcher does). */
function openclawConfigDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-openclaw-secrets-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  vi.stubEnv("OPENCLAW_CONFIG_PATH", path.join(dir, "openclaw.json"));
  return dir;
}

function secretFile(dir: string, name: string, text: string, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, `${text}\n`);
  chmodSync(file, mode);
  return file;
}

function configError(register: () => void): string {
  try {
    register();
  } catch (error) {
    if (isConfigError(error)) return error.message;
    throw error;
  }
  throw new Error("registered without a config error");
}

describe("OpenClaw adapter: secrets from files and the environment", () => {
  it("reads the token from a file relative to OpenClaw's config file, and a request authenticates with it", async () => {
    const dir = openclawConfigDir();
    secretFile(dir, "hook-token", TOKEN);
    const fake = fakeOpenClaw({
      pluginConfig: { enabled: true, token: { file: "hook-token" }, path: "/intake" },
    });
    const server = await servePlugin(fake);
    cleanups.push(server.stop);
    const wake = (token: string) =>
      fetch(`${server.url}/intake/wake`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "from a file" }),
      });
    expect((await wake(TOKEN)).status).toBe(200);
    expect((await wake("not-the-token-0123456789abcdef")).status).toBe(401);
    expect(fake.queue.drain("agent:main:main")).toHaveLength(1);
    expect(fake.logs.join("\n")).not.toContain(TOKEN);
  });

  it("names the problems by OpenClaw's keys, all in one round, the file's own name left as it is", () => {
    const dir = openclawConfigDir();
    // A file named like a key: its path must come out as written, not rewritten to OpenClaw's key.
    const file = secretFile(dir, "hooks.token", TOKEN, 0o644);
    const fake = fakeOpenClaw({
      pluginConfig: {
        enabled: true,
        token: { file: "hooks.token" },
        path: "/intake",
        mappings: [
          {
            id: "github",
            match: { path: "github" },
            action: "wake",
            textTemplate: "push",
            verify: { scheme: "github", secret: { env: "OPENCLAW_SECRETS_TEST_UNSET" } },
          },
        ],
      },
    });
    const message = configError(() => openclawPlugin.register(fake.api));
    expect(message).toContain(
      `${KEY}.token: ${file} may be read or written by other users, so the secret in it is not kept (chmod 600 ${file}, or 640 to share it with the file's group)`,
    );
    expect(message).toContain(
      `${KEY}.mappings[0].verify.secret: environment variable OPENCLAW_SECRETS_TEST_UNSET is not set`,
    );
    expect(message).not.toContain(TOKEN);
  });

  it("checks a signature with the signing secret read from the environment", async () => {
    openclawConfigDir();
    const SECRET = "github-secret-from-the-env-0123456789";
    vi.stubEnv("OPENCLAW_SECRETS_TEST_GITHUB", SECRET);
    const fake = fakeOpenClaw({
      pluginConfig: {
        enabled: true,
        token: TOKEN,
        path: "/intake",
        mappings: [
          {
            id: "github",
            match: { path: "github" },
            action: "wake",
            textTemplate: "push to {{ref}}",
            verify: { scheme: "github", secret: { env: "OPENCLAW_SECRETS_TEST_GITHUB" }, tokenAlso: false },
          },
        ],
      },
    });
    const server = await servePlugin(fake);
    cleanups.push(server.stop);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const push = async (secret: string) =>
      fetch(`${server.url}/intake/github`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "push",
          "x-github-delivery": crypto.randomUUID(),
          "x-hub-signature-256": await sign(secret, body),
        },
        body,
      });
    expect((await push(SECRET)).status).toBe(200);
    expect((await push("another-secret-0123456789abcdef")).status).toBe(401);
  });
});

/** @module `hooks check`: a good config lists endpoints and mappings (exit 0); a bad one lists every problem (exit 1). */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { baseConfig, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";

afterEach(cleanupCli);

function transformsDir(dir: string, files: Record<string, string>): void {
  const target = path.join(dir, "hooks/transforms");
  mkdirSync(target, { recursive: true });
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(target, name), source);
}

/** One mapping per kind of problem `hooks check` must report. */
const BROKEN_MAPPINGS = [
  { id: "broken", match: { path: "broken" }, transform: { module: "broken.ts" } },
  { id: "no-export", match: { path: "no-export" }, transform: { module: "no-export.mjs" } },
  { id: "throws", match: { path: "throws" }, transform: { module: "throws.mjs" } },
  { id: "escape", match: { path: "escape" }, transform: { module: "../outside.ts" } },
  { id: "bad-template", match: { path: "t" }, messageTemplate: "{{ unclosed" },
  { id: "reserved", match: { path: "wake" } },
  { id: "bad-channel", match: { path: "c" }, channel: "sms" },
];

describe("hooks check", () => {
  it("accepts a good config: loads its transforms, lists endpoints and mappings, exits 0", async () => {
    const dir = makeTempDir();
    transformsDir(dir, {
      "shape.ts": "export default (ctx: { payload: unknown }) => ({ kind: 'wake' as const, text: 'x' });",
    });
    const config = writeConfig(
      dir,
      baseConfig(
        { server: { port: 4321 } },
        {
          presets: ["mailbox"],
          mappings: [
            { id: "shaped", match: { path: "shape" }, transform: { module: "shape.ts" } },
            { id: "by-source", match: { source: "stripe" }, action: "wake", textTemplate: "{{type}}" },
          ],
        },
      ),
    );
    const result = await runCli(["check", "--config", config]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("http://127.0.0.1:4321/hooks/wake");
    expect(result.stdout).toContain("http://127.0.0.1:4321/hooks/agent");
    expect(result.stdout).toMatch(
      /shaped\s+path=shape → \/hooks\/shape\s+token\s+agent\s+transform shape\.ts\s+loaded/,
    );
    expect(result.stdout).toMatch(/by-source\s+source=stripe\s+token\s+wake\s+template\s+ok/);
    expect(result.stdout).toMatch(/mailbox\s+path=mailbox → \/hooks\/mailbox\s+token\s+agent\s+preset\s+ok/);
    expect(result.stdout).toContain("ok: config is valid");
  });

  it("refuses a secret's variable in rendered text, naming the field and the variable, never the value; hooks serve does not start", async () => {
    const dir = makeTempDir();
    const env = {
      CHECK_HOOK_TOKEN: "hook-token-value-0123456789abcdef",
      CHECK_GH_SECRET: "gh-secret-value-0123456789",
      CHECK_METRICS_TOKEN: "metrics-token-value-0123456789",
      CHECK_IMAP_PASSWORD: "imap-password-value",
      CHECK_TEAM: "platform",
    };
    const config = writeConfig(dir, {
      hooks: {
        enabled: true,
        token: "${CHECK_HOOK_TOKEN}",
        mailbox: { passwordEnv: "CHECK_IMAP_PASSWORD" },
        transforms: { env: ["CHECK_TEAM", "CHECK_GH_SECRET"] },
        mappings: [
          {
            id: "leaky",
            match: { path: "leaky" },
            name: "${CHECK_TEAM} build",
            messageTemplate: "Deploy {{ref}} with token ${CHECK_HOOK_TOKEN} (literal: $${CHECK_HOOK_TOKEN})",
            verify: { scheme: "github", secret: "${CHECK_GH_SECRET}" },
            response: { body: "ok ${CHECK_GH_SECRET}" },
          },
          { id: "metrics", match: { path: "m" }, action: "wake", textTemplate: "${CHECK_METRICS_TOKEN}" },
          { id: "mail", match: { path: "mail" }, sessionKey: "hook:${CHECK_IMAP_PASSWORD}" },
        ],
      },
      server: { metricsToken: "${CHECK_METRICS_TOKEN}" },
    });
    const result = await runCli(["check", "--config", config], { env });
    expect(result.code).toBe(1);
    const problems = result.stderr.split("\n").filter((line) => line.startsWith("  - "));
    expect(problems).toEqual([
      expect.stringMatching(
        /^ {2}- hooks\.transforms\.env\[1\]: names CHECK_GH_SECRET, which hooks\.mappings\[0\]\.verify\.secret uses for a secret/,
      ),
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[0\]\.messageTemplate: uses \$\{CHECK_HOOK_TOKEN\}, which hooks\.token uses for a secret/,
      ),
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[0\]\.response\.body: uses \$\{CHECK_GH_SECRET\}, which hooks\.mappings\[0\]\.verify\.secret uses/,
      ),
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[1\]\.textTemplate: uses \$\{CHECK_METRICS_TOKEN\}, which server\.metricsToken uses/,
      ),
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[2\]\.sessionKey: uses \$\{CHECK_IMAP_PASSWORD\}, which hooks\.mailbox\.passwordEnv uses/,
      ),
    ]);
    const output = result.stdout + result.stderr;
    for (const name of [
      "CHECK_HOOK_TOKEN",
      "CHECK_GH_SECRET",
      "CHECK_METRICS_TOKEN",
      "CHECK_IMAP_PASSWORD",
    ] as const)
      expect(output).not.toContain(env[name]);

    const serve = await runCli(
      ["serve", "--port", "0", "--config", config, "--state-dir", path.join(dir, "state")],
      {
        env,
      },
    );
    expect(serve.code).not.toBe(0);
    expect(serve.stderr).toContain("hooks.mappings[0].messageTemplate: uses ${CHECK_HOOK_TOKEN}");
    expect(serve.stdout + serve.stderr).not.toContain(env.CHECK_HOOK_TOKEN);
  });

  it("accepts the bundled demo config", async () => {
    const result = await runCli(["check"], { cwd: makeTempDir(), env: { HOOKS_TOKEN: "" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("fixtures/demo/gateway.json5");
    expect(result.stdout).toMatch(/alert\s+path=alerts.*transform alert\.ts\s+loaded/);
  });

  it("rejects a bad config with every problem listed in one round, transform failures with mapping id and module path", async () => {
    const dir = makeTempDir();
    transformsDir(dir, {
      "broken.ts": "export default function (ctx {",
      "no-export.mjs": "export const notAFunction = 1;",
      "throws.mjs": "throw new Error('fails at import');",
    });
    const config = writeConfig(dir, {
      hooks: {
        enabled: true,
        token: "${CHECK_TEST_UNSET_VAR}",
        maxBodyBytes: "big",
        mappings: BROKEN_MAPPINGS,
      },
      heartbeat: { everySecond: 10 },
      runner: { kind: "openai", baseUrl: "not a url", model: "" },
      sever: { port: 1 },
    });
    const result = await runCli(["check", "--config", config], { env: { CHECK_TEST_UNSET_VAR: undefined } });
    expect(result.code).toBe(1);
    const expected = [
      "hooks.token: environment variable CHECK_TEST_UNSET_VAR is not set",
      "hooks.maxBodyBytes:",
      'heartbeat.everySecond: unknown key (did you mean "everySeconds"?)',
      "runner.baseUrl: must be an absolute URL",
      "runner.model: must not be empty",
      'sever: unknown key (did you mean "server"?)',
    ];
    for (const problem of expected) expect(result.stderr).toContain(problem);
    // One round: the mapping problems are listed beside the broken hooks field, not after it is fixed.
    const second = result;
    const problems = second.stderr.split("\n").filter((line) => line.startsWith("  - "));
    expect(problems).toHaveLength(expected.length + 7);
    expect(second.stderr).toMatch(
      /hooks\.mappings\[0\]\.transform\.module: mapping "broken": transform broken\.ts failed to load/,
    );
    expect(second.stderr).toMatch(
      /hooks\.mappings\[1\]\.transform\.module: mapping "no-export": transform no-export\.mjs failed to load: .*no function export/,
    );
    expect(second.stderr).toMatch(
      /hooks\.mappings\[2\]\.transform\.module: mapping "throws": transform throws\.mjs failed to load: fails at import/,
    );
    expect(second.stderr).toContain('hooks.mappings[3].transform.module: must not contain ".." segments');
    expect(second.stderr).toMatch(/hooks\.mappings\[4\]\.messageTemplate: invalid template/);
    expect(second.stderr).toMatch(/hooks\.mappings\[5\]\.match\.path: "wake" is reserved/);
    expect(second.stderr).toMatch(/hooks\.mappings\[6\]\.channel: channel "sms" is not offered here/);
    expect(second.stdout).toMatch(/escape\s+.*INVALID/);
  });
});

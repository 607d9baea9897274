/** @module `hooks check`: a good config lists endpoints and mappings (exit 0); a bad one lists every problem (exit 1). */
import { execFile } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { baseConfig, writeConfig } from "../gateway/support.js";
import { BIN, cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { DEMO_VARIABLES, FIXTURES, REPO_ROOT } from "../helpers/repo.js";

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
            {
              id: "gh",
              match: { path: "gh" },
              action: "wake",
              textTemplate: "x",
              verify: { scheme: "github", secret: "gh-secret-0123" },
            },
            {
              id: "gh-strict",
              match: { path: "gh-strict" },
              action: "wake",
              textTemplate: "x",
              verify: { scheme: "github", secret: "gh-secret-0123", tokenAlso: false },
            },
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
    // What gets in on a signed path: its signature, and the hook token unless tokenAlso is false.
    expect(result.stdout).toMatch(/gh\s+path=gh → \/hooks\/gh\s+github signature or token\s+wake/);
    expect(result.stdout).toMatch(
      /gh-strict\s+path=gh-strict → \/hooks\/gh-strict\s+github signature\s+wake/,
    );
    expect(result.stdout).toMatch(/mailbox\s+path=mailbox → \/hooks\/mailbox\s+token\s+agent\s+preset\s+ok/);
    expect(result.stdout).toContain("ok: config is valid");
  });

  it("shows each hook's rate limit: /wake and /agent on their endpoint line, a mapping's in a column of the table", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        { server: { port: 4321 } },
        {
          limits: {
            default: { rateLimit: { requests: 600, perSeconds: 60 } },
            agent: { rateLimit: { requests: 10, perSeconds: 3600, per: "hook" } },
          },
          mappings: [
            { id: "alerts", match: { path: "alerts" }, action: "wake", textTemplate: "{{title}}" },
            {
              id: "deploys",
              match: { path: "deploys" },
              action: "wake",
              textTemplate: "{{env}}",
              rateLimit: { requests: 5, perSeconds: 60, per: "hook" },
            },
          ],
        },
      ),
    );
    const result = await runCli(["check", "--config", config]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /\/hooks\/wake\s+wake: queue a system event for the main session \(at most 600 per 60 s, per client\)\n/,
    );
    expect(result.stdout).toMatch(
      /\/hooks\/agent\s+agent: run an isolated agent turn \(at most 10 per 3600 s, all senders together\)\n/,
    );
    expect(result.stdout).toMatch(/id\s+match\s+gets in with\s+action\s+builds with\s+rate limit\s+status\n/);
    expect(result.stdout).toMatch(
      /alerts\s+path=alerts → \/hooks\/alerts\s+token\s+wake\s+template\s+600 per 60 s, per client\s+ok/,
    );
    expect(result.stdout).toMatch(
      /deploys\s+path=deploys → \/hooks\/deploys\s+token\s+wake\s+template\s+5 per 60 s, all senders together\s+ok/,
    );
  });

  it("shows a mapping's instructions in the table; refuses a template, over-long text and a secret's variable in them", async () => {
    const dir = makeTempDir();
    const good = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            {
              id: "triage",
              match: { path: "alert" },
              action: "wake",
              instructions: "Summarise the alert below.",
              textTemplate: "{{msg}}",
            },
          ],
        },
      ),
    );
    const ok = await runCli(["check", "--config", good]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /triage\s+path=alert → \/hooks\/alert\s+token\s+wake\s+template \+ instructions \(26 chars\)\s+ok/,
    );

    const bad = writeConfig(
      dir,
      baseConfig(
        {},
        {
          token: "${CHECK_HOOK_TOKEN}",
          mappings: [
            { id: "templated", match: { path: "a" }, instructions: "Reply to {{sender}}." },
            { id: "long", match: { path: "b" }, instructions: "x".repeat(4_001) },
            { id: "leaky", match: { path: "c" }, instructions: "Use ${CHECK_HOOK_TOKEN} to log in." },
          ],
        },
      ),
    );
    const env = { CHECK_HOOK_TOKEN: "hook-token-value-0123456789abcdef" };
    const refused = await runCli(["check", "--config", bad], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr.split("\n").filter((line) => line.startsWith("  - "))).toEqual([
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[2\]\.instructions: uses \$\{CHECK_HOOK_TOKEN\}, which hooks\.token uses for a secret/,
      ),
      expect.stringMatching(
        /^ {2}- hooks\.mappings\[0\]\.instructions: is not a template: \{\{…\}\} would put payload text outside the safety wrapper/,
      ),
      "  - hooks.mappings[1].instructions: must be at most 4000 characters",
    ]);
    expect(refused.stdout + refused.stderr).not.toContain(env.CHECK_HOOK_TOKEN);
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

  it("still refuses a secret's variable in rendered text when that variable is not set yet", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          token: "${CHECK_UNSET_TOKEN}",
          mappings: [
            { id: "leaky", match: { path: "leaky" }, messageTemplate: "token ${CHECK_UNSET_TOKEN}" },
          ],
        },
      ),
    );
    const result = await runCli(["check", "--config", config], { env: { CHECK_UNSET_TOKEN: undefined } });
    expect(result.code).toBe(1);
    // The unset variable makes the template's value unknown, not the `${…}` written in it: setting it fixes one.
    expect(result.stderr.split("\n").filter((line) => line.startsWith("  - "))).toEqual([
      "  - hooks.mappings[0].messageTemplate: uses ${CHECK_UNSET_TOKEN}, which hooks.token uses for a secret: its value would be rendered into a message or an answer. Take the value from the request, or another variable",
      "  - hooks.token, hooks.mappings[0].messageTemplate: environment variable CHECK_UNSET_TOKEN is not set",
    ]);
  });

  it("warns about hmac mappings whose delivery id is not signed, saying what the plugin does and how to say it is", async () => {
    const dir = makeTempDir();
    const hmac = (path: string, fields: Record<string, string>) => ({
      id: path,
      match: { path },
      action: "wake",
      textTemplate: "x",
      verify: { scheme: "hmac", secret: "hmac-secret-0123", header: "x-signature", ...fields },
    });
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            hmac("unsigned-id", { timestampHeader: "x-timestamp", idHeader: "X-Delivery" }),
            hmac("bare", {}),
            hmac("bare-with-id", { idHeader: "x-delivery" }),
            // Quiet: the id is signed.
            hmac("signed-id", { idHeader: "x-delivery", signedContent: "{id}.{body}" }),
            hmac("timestamp-only", { timestampHeader: "x-timestamp" }),
          ],
        },
      ),
    );
    const result = await runCli(["check", "--config", config]);
    expect(result.code).toBe(0);
    const warnings = result.stdout.split("\n").filter((line) => line.startsWith("warning: "));
    expect(warnings).toEqual([
      "warning: hooks.mappings[0].verify: its id header x-delivery is not signed: a copy with a new id would be a new delivery, so the plugin takes the same body within hooks.dedupe.windowSeconds as the same delivery, whatever its id (a copy is refused anyway once its timestamp is older than toleranceSeconds). If the sender signs its id, add {id} to signedContent.",
      "warning: hooks.mappings[1].verify: the sender signs neither a timestamp nor its delivery id: a captured delivery can be sent again under any id, at any time; the plugin takes the same body within hooks.dedupe.windowSeconds as the same delivery, whatever its id, and a copy sent after that window is a new delivery. If the sender signs a timestamp or its id, say so in signedContent ({timestamp} with timestampHeader, {id} with idHeader).",
      expect.stringMatching(
        /^warning: hooks\.mappings\[2\]\.verify: the sender signs neither a timestamp nor its delivery id \(its idHeader x-delivery is not in signedContent\): /,
      ),
      "warning: hooks.mappings[4].verify: the sender signs no delivery id: the plugin takes the same signed timestamp and body as the same delivery (a copy is refused anyway once its timestamp is older than toleranceSeconds), and a retry the sender signs anew runs again. If the sender sends an id, name it in idHeader and add {id} to signedContent.",
    ]);
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

  it("lists an invalid mapping as invalid with its problem, not as the catch-all agent it was compiled to", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            { id: "bad-match", match: "github", action: "wake", textTemplate: "x" },
            { id: "good", match: { path: "g" }, action: "wake", textTemplate: "x" },
          ],
        },
      ),
    );
    const result = await runCli(["check", "--config", config]);
    expect(result.code).toBe(1);
    const row = result.stdout.split("\n").find((line) => line.trim().startsWith("bad-match"));
    expect(row).toMatch(/^\s+bad-match\s+-\s+-\s+-\s+-\s+INVALID: match: invalid type/);
    expect(row).not.toMatch(/catch-all|agent/);
    expect(result.stdout).toMatch(/good\s+path=g → \/hooks\/g\s+token\s+wake\s+template\s+ok/);
  });
});

/** A copy of the demo as the user's own ./gateway.json5, every variable it reads unset, run as a shell would. */
function demoCopy(): { cwd: string; env: Record<string, string | undefined> } {
  const cwd = makeTempDir();
  copyFileSync(path.join(FIXTURES, "demo/gateway.json5"), path.join(cwd, "gateway.json5"));
  cpSync(path.join(FIXTURES, "demo/hooks"), path.join(cwd, "hooks"), { recursive: true });
  const env: Record<string, string | undefined> = Object.fromEntries(
    DEMO_VARIABLES.map((name) => [name, undefined]),
  );
  // Not through npm: how the CLI was started decides the hint, and the tests may run under npm.
  env.npm_command = undefined;
  env.npm_lifecycle_event = undefined;
  env.PATH = path.dirname(process.execPath);
  return { cwd, env };
}

const problemLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("  - "));

describe("hooks check with the demo's variables unset", () => {
  it("lists one problem per unset variable, naming every field that uses it, and nothing about the placeholders", async () => {
    const { cwd, env } = demoCopy();
    const result = await runCli(["check"], { cwd, env });
    expect(result.code).toBe(1);
    const problems = problemLines(result.stderr);
    expect(problems).toHaveLength(DEMO_VARIABLES.length);
    for (const name of DEMO_VARIABLES) {
      expect(
        problems.filter((line) => line.includes(`environment variable ${name} is not set`)),
      ).toHaveLength(1);
    }
    expect(result.stderr).toContain(
      "  - hooks.mappings[6].verify.secret, hooks.mappings[7].verify.secret, hooks.mappings[8].verify.secret, hooks.mappings[9].verify.secret: environment variable GITHUB_WEBHOOK_SECRET is not set (export it",
    );
    // The checks of a value saw only the `${VAR}` text: a secret "must be whsec_…", a token "shorter than 24".
    expect(result.stderr).not.toMatch(/whsec_/);
    expect(result.stdout).not.toMatch(/warning: hooks\.token is shorter/);
    expect(result.stdout).toMatch(
      /standard-webhooks-event\s+path=events → \/hooks\/events\s+standard-webhooks signature or token\s+wake\s+template\s+INVALID: verify\.secret: STANDARD_WEBHOOK_SECRET is not set/,
    );
  });

  it("hooks serve refuses to start with the same list: one problem per unset variable", async () => {
    const { cwd, env } = demoCopy();
    const result = await runCli(["serve", "--port", "0"], { cwd, env });
    expect(result.code).toBe(1);
    const problems = problemLines(result.stderr);
    expect(problems).toHaveLength(DEMO_VARIABLES.length);
    expect(result.stderr).toContain(`has ${DEMO_VARIABLES.length} problem(s)`);
    expect(result.stderr).not.toMatch(/whsec_/);
  });

  /** The token hint's command, run by a shell where the user is: it must print a token. */
  async function hintWorks(cwd: string, env: Record<string, string | undefined>): Promise<string> {
    const result = await runCli(["check", "--config", path.join(demoCopy().cwd, "gateway.json5")], {
      cwd,
      env,
    });
    const command = /export HOOKS_TOKEN="\$\((.+) token\)" first/.exec(result.stderr)?.[1];
    expect(command).toBeDefined();
    const shellEnv: NodeJS.ProcessEnv = { ...process.env, ...env, npm_config_yes: "false" };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete shellEnv[name];
    const { stdout: token } = await promisify(execFile)("/bin/sh", ["-c", `${command} token`], {
      cwd,
      env: shellEnv,
      encoding: "utf8",
    });
    expect(token.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    return command!;
  }

  it("hints at a token command that works where the user is: node and the script's path outside a checkout", async () => {
    const { cwd, env } = demoCopy();
    expect(await hintWorks(cwd, env)).toBe(`node ${BIN}`);
  });

  // Raised from the default: `npx hooks token` is npm first, which loads itself and reads the checkout's whole
  // dependency tree to find the package's own bin, about 2.5 s of CPU before the CLI starts. On 2 cores shared with
  // the rest of the suite and another CPU-bound job that took 12 to 37 s; the test does nothing else of note.
  it("hints at npx hooks inside the checkout, or when npm started the CLI", { timeout: 90_000 }, async () => {
    const { env } = demoCopy();
    expect(await hintWorks(REPO_ROOT, env)).toBe("npx hooks");
    const elsewhere = makeTempDir();
    const viaNpx = await runCli(["check", "--config", path.join(demoCopy().cwd, "gateway.json5")], {
      cwd: elsewhere,
      env: { ...env, npm_command: "exec" },
    });
    expect(viaNpx.stderr).toContain('export HOOKS_TOKEN="$(npx hooks token)" first');
  });

  it("hints at hooks when that is this CLI on PATH", async () => {
    const { cwd, env } = demoCopy();
    const bin = makeTempDir();
    symlinkSync(BIN, path.join(bin, "hooks"));
    expect(await hintWorks(cwd, { ...env, PATH: `${bin}${path.delimiter}${env.PATH}` })).toBe("hooks");
  });
});

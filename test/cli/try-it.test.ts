/** @module The "make the demo your own" steps of docs/gateway.md, followed as written, leave check, replay and the fixture tests working. */
import { copyFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";

afterEach(cleanupCli);

const DEMO = path.join(REPO_ROOT, "fixtures/demo/gateway.json5");
/** The demo's signed mappings read their senders' secrets from these. */
const SENDER_SECRETS = {
  GITHUB_WEBHOOK_SECRET: "try-it-github-secret",
  STRIPE_WEBHOOK_SECRET: "whsec_try-it-stripe-secret",
  SLACK_SIGNING_SECRET: "try-it-slack-secret",
  STANDARD_WEBHOOK_SECRET: `whsec_${Buffer.from("try-it-standard-webhooks").toString("base64")}`,
  TWILIO_AUTH_TOKEN: "try-it-twilio-auth-token",
  META_APP_SECRET: "try-it-meta-app-secret",
  META_VERIFY_TOKEN: "try-it-meta-verify-token",
};

/** A directory where the demo was copied to ./gateway.json5 with its transforms and a deploy mapping, as docs/gateway.md says. */
function ownCopyOfTheDemo(): string {
  const dir = makeTempDir();
  copyFileSync(DEMO, path.join(dir, "gateway.json5"));
  cpSync(path.join(REPO_ROOT, "fixtures/demo/hooks"), path.join(dir, "hooks"), { recursive: true });
  writeFileSync(
    path.join(dir, "hooks/transforms/deploy.ts"),
    'import type { HookTransform } from "hooks-intake";\nconst t: HookTransform<{ app: string }> = ({ payload }) => ({ kind: "agent", message: `${payload.app} is live`, deliver: false });\nexport default t;\n',
  );
  const config = JSON5.parse(readFileSync(path.join(dir, "gateway.json5"), "utf8"));
  config.hooks.mappings.push({ id: "deploy", match: { path: "deploy" }, transform: { module: "deploy.ts" } });
  writeFileSync(path.join(dir, "gateway.json5"), JSON5.stringify(config, null, 2));
  return dir;
}

describe("making the demo your own, as docs/gateway.md says", () => {
  it("hooks check passes once HOOKS_TOKEN and the senders' secrets are exported, and says how to set them when they are not", async () => {
    const cwd = ownCopyOfTheDemo();
    const ok = await runCli(["check"], {
      cwd,
      env: { HOOKS_TOKEN: "try-it-token-0123456789abcdef0123", ...SENDER_SECRETS },
    });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/deploy\s+path=deploy.*transform deploy\.ts\s+loaded/);
    // Each signed mapping says which sender's signature guards it.
    expect(ok.stdout).toMatch(
      /github-webhook-push\s+path=github header x-github-event=push .*\s+github signature or token\s+wake/,
    );
    // The secrets are config: never in check's output.
    for (const secret of Object.values(SENDER_SECRETS)) expect(ok.stdout).not.toContain(secret);

    const unset = await runCli(["check"], {
      cwd,
      env: { HOOKS_TOKEN: undefined, ...SENDER_SECRETS, GITHUB_WEBHOOK_SECRET: undefined },
    });
    expect(unset.code).toBe(1);
    // How the hint spells the command depends on how the CLI was started; check.test.ts pins each case.
    expect(unset.stderr).toMatch(
      /hooks\.token: environment variable HOOKS_TOKEN is not set \(export HOOKS_TOKEN="\$\((?:npx hooks|hooks|node \S+) token\)" first\)/,
    );
    expect(unset.stderr).toMatch(
      /verify\.secret: environment variable GITHUB_WEBHOOK_SECRET is not set \(export it with the signing secret from the sender's webhook settings, or remove the mappings of a sender you do not use\)/,
    );
  });

  it("the test command's fixture step and hooks replay still work beside it, with HOOKS_TOKEN unset", async () => {
    const cwd = ownCopyOfTheDemo();
    const env = { HOOKS_TOKEN: undefined };
    const fixtures = await runCli(["test", path.join(REPO_ROOT, "fixtures"), "--config", DEMO], { cwd, env });
    expect(fixtures.code).toBe(0);
    expect(fixtures.stdout).toMatch(/\d+ passed, 0 failed/);

    const fixture = path.join(cwd, "deploy.json");
    writeFileSync(
      fixture,
      JSON.stringify({ name: "deploy", request: { path: "deploy", body: { app: "shop" } } }),
    );
    const replay = await runCli(["replay", fixture, "--json"], { cwd, env });
    expect(replay.code).toBe(0);
    expect(replay.stderr).toMatch(
      /note: HOOKS_TOKEN, GITHUB_WEBHOOK_SECRET, .* are not set; the replay used a random stand-in/,
    );
    expect(JSON.parse(replay.stdout).reports[0]).toMatchObject({ status: 202, mappingId: "deploy" });
  });
});

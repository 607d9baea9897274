/** @module The README's "make the demo your own" steps, followed as written, leave check, replay and the fixture tests working. */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/spawn-cli.js";

afterEach(cleanupCli);

const DEMO = path.join(REPO_ROOT, "fixtures/demo/gateway.json5");

/** A directory where the demo was copied to ./gateway.json5 with its transform and a deploy mapping, as the README says. */
function ownCopyOfTheDemo(): string {
  const dir = makeTempDir();
  copyFileSync(DEMO, path.join(dir, "gateway.json5"));
  mkdirSync(path.join(dir, "hooks/transforms"), { recursive: true });
  copyFileSync(
    path.join(REPO_ROOT, "fixtures/demo/hooks/transforms/alert.ts"),
    path.join(dir, "hooks/transforms/alert.ts"),
  );
  writeFileSync(
    path.join(dir, "hooks/transforms/deploy.ts"),
    'import type { HookTransform } from "hooks-intake";\nconst t: HookTransform<{ app: string }> = ({ payload }) => ({ kind: "agent", message: `${payload.app} is live`, deliver: false });\nexport default t;\n',
  );
  const config = JSON5.parse(readFileSync(path.join(dir, "gateway.json5"), "utf8"));
  config.hooks.mappings.push({ id: "deploy", match: { path: "deploy" }, transform: { module: "deploy.ts" } });
  writeFileSync(path.join(dir, "gateway.json5"), JSON5.stringify(config, null, 2));
  return dir;
}

describe("making the demo your own, as the README says", () => {
  it("hooks check passes once HOOKS_TOKEN is exported, and says how to set it when it is not", async () => {
    const cwd = ownCopyOfTheDemo();
    const ok = await runCli(["check"], { cwd, env: { HOOKS_TOKEN: "try-it-token-0123456789abcdef0123" } });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/deploy\s+path=deploy.*transform deploy\.ts\s+loaded/);

    const unset = await runCli(["check"], { cwd, env: { HOOKS_TOKEN: undefined } });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain(
      'hooks.token: environment variable HOOKS_TOKEN is not set (export HOOKS_TOKEN="$(hooks token)" first)',
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
    expect(replay.stderr).toContain("HOOKS_TOKEN is not set; the replay used a random stand-in");
    expect(JSON.parse(replay.stdout).reports[0]).toMatchObject({ status: 202, mappingId: "deploy" });
  });
});

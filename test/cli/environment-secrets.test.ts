/**
 * @module `hooks check` and the start of `hooks serve` name the environment variables that hold a secret when the
 * config runs transforms beside them (a transform can read the gateway's environment through /proc), never their
 * values; a secret given as `{ file }`, or a config without transforms, gets no such warning.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli, startServe } from "../helpers/cli.js";

afterEach(cleanupCli);

const ENV = {
  EXPOSED_HOOK_TOKEN: "exposed-hook-token-0123456789abcdef",
  EXPOSED_GH_SECRET: "exposed-github-secret-0123456789",
  EXPOSED_METRICS_TOKEN: "exposed-metrics-token-0123456789",
  EXPOSED_INSPECTOR_KEY: "exposed-inspector-key-0123456789",
};
const NAMES = Object.keys(ENV).sort();
const WARNING = /transforms run beside secrets read from the environment \(([^)]*)\)/;

/** The secret fields, each as `${VAR}` or `{ env }`, or each as `{ file }` holding the same value. */
function secrets(dir: string, from: "environment" | "files") {
  if (from === "environment") {
    return {
      token: "${EXPOSED_HOOK_TOKEN}",
      github: { env: "EXPOSED_GH_SECRET" },
      metricsToken: "${EXPOSED_METRICS_TOKEN}",
      inspectorKey: { env: "EXPOSED_INSPECTOR_KEY" },
    };
  }
  mkdirSync(path.join(dir, "secrets"));
  const file = (name: keyof typeof ENV) => {
    const at = path.join(dir, "secrets", name);
    writeFileSync(at, `${ENV[name]}\n`);
    chmodSync(at, 0o600);
    return { file: `secrets/${name}` };
  };
  return {
    token: file("EXPOSED_HOOK_TOKEN"),
    github: file("EXPOSED_GH_SECRET"),
    metricsToken: file("EXPOSED_METRICS_TOKEN"),
    inspectorKey: file("EXPOSED_INSPECTOR_KEY"),
  };
}

function configIn(dir: string, from: "environment" | "files", withTransform: boolean): string {
  const transforms = path.join(dir, "hooks/transforms");
  mkdirSync(transforms, { recursive: true });
  writeFileSync(
    path.join(transforms, "shape.ts"),
    "export default () => ({ kind: 'wake' as const, text: 'x' });\n",
  );
  const { token, github, metricsToken, inspectorKey } = secrets(dir, from);
  return writeConfig(dir, {
    hooks: {
      enabled: true,
      token,
      mappings: [
        {
          id: "gh",
          match: { path: "gh" },
          action: "wake",
          textTemplate: "push",
          verify: { scheme: "github", secret: github },
        },
        withTransform
          ? { id: "shaped", match: { path: "shape" }, transform: { module: "shape.ts" } }
          : { id: "plain", match: { path: "plain" }, action: "wake", textTemplate: "plain" },
      ],
    },
    server: { metricsToken, inspector: { key: inspectorKey } },
  });
}

describe("transforms beside secrets from the environment", () => {
  it("hooks check names every variable that holds a secret, in one warning, and none of their values", async () => {
    const dir = makeTempDir();
    const result = await runCli(["check", "--config", configIn(dir, "environment", true)], { env: ENV });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const warnings = result.stdout.split("\n").filter((line) => WARNING.test(line));
    expect(warnings).toHaveLength(1);
    expect(WARNING.exec(warnings[0]!)?.[1]?.split(", ")).toEqual(NAMES);
    expect(warnings[0]).toContain("give them as { file }");
    for (const value of Object.values(ENV)) expect(result.stdout).not.toContain(value);
  });

  it("says nothing of it when the secrets are files, or when no transform runs", async () => {
    const files = await runCli(["check", "--config", configIn(makeTempDir(), "files", true)], { env: {} });
    expect(files.code).toBe(0);
    expect(files.stdout).not.toMatch(WARNING);
    const plain = await runCli(["check", "--config", configIn(makeTempDir(), "environment", false)], {
      env: ENV,
    });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toMatch(WARNING);
    // The bundled demo with no HOOKS_TOKEN set: the token made for this run is kept out of the environment.
    const demo = await runCli(["check"], { cwd: makeTempDir(), env: { HOOKS_TOKEN: "" } });
    expect(demo.code).toBe(0);
    expect(demo.stdout).toMatch(/alert\s+path=alerts.*transform alert\.ts\s+loaded/);
    expect(demo.stdout).not.toMatch(WARNING);
  });

  it("hooks serve logs it once at its start, naming the variables and none of their values", async () => {
    const dir = makeTempDir();
    const gateway = await startServe(
      ["--config", configIn(dir, "environment", true), "--state-dir", path.join(dir, "state")],
      { env: ENV },
    );
    await fetch(`${gateway.url}/hooks/wake`, { method: "POST" });
    const warned = gateway
      .logs()
      .filter((record) => typeof record.msg === "string" && WARNING.test(record.msg));
    expect(warned).toHaveLength(1);
    expect(WARNING.exec(warned[0]!.msg as string)?.[1]?.split(", ")).toEqual(NAMES);
    const output = gateway.stdout() + gateway.stderr();
    for (const value of Object.values(ENV)) expect(output).not.toContain(value);
  });
});

/** @module `hooks test --update` rewrites only the fixtures whose outcome changed, and only their `expect`; every other byte stays. */
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { setTopLevelField } from "../../src/replay/fixture-text.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { FIXTURES } from "../helpers/repo.js";

afterEach(cleanupCli);

const DEMO_CONFIG = path.join(FIXTURES, "demo/gateway.json5");

/** The shipped fixture library in a temp dir, as a user keeps a copy of it in their own repository. */
function copyLibrary(): string {
  const dir = makeTempDir("test-update-");
  cpSync(path.join(FIXTURES, "hooks"), path.join(dir, "hooks"), { recursive: true });
  cpSync(path.join(FIXTURES, "payloads"), path.join(dir, "payloads"), { recursive: true });
  return dir;
}

function snapshot(dir: string): Map<string, string> {
  const files = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => /\.json5?$/.test(name));
  return new Map(files.map((name) => [name, readFileSync(path.join(dir, name), "utf8")]));
}

function changedFiles(before: Map<string, string>, dir: string): string[] {
  const after = snapshot(dir);
  return [...after].filter(([name, text]) => before.get(name) !== text).map(([name]) => name);
}

describe("hooks test --update", () => {
  it("leaves every fixture whose expectation still holds byte for byte alone, and says so", async () => {
    const dir = copyLibrary();
    const before = snapshot(dir);
    const run = await runCli(["test", "hooks", "--update", "--config", DEMO_CONFIG], { cwd: dir });
    expect(run.code).toBe(0);
    expect(changedFiles(before, dir)).toEqual([]);
    const fixtures = Number(/^(\d+) passed, 0 failed$/m.exec(run.stdout)?.[1]);
    expect(fixtures).toBeGreaterThanOrEqual(30);
    expect(run.stdout).toContain(`rewrote 0 fixture(s); left ${fixtures} as they were`);
  });

  it("rewrites only the expect block of a fixture whose outcome changed; comments and layout around it stay", async () => {
    const dir = copyLibrary();
    const file = path.join(dir, "hooks/stripe/events-stale-timestamp.json5");
    const original = readFileSync(file, "utf8");
    // An expectation the replay no longer meets, with the author's own comments around and inside the file.
    const edited = original
      .replace('path: "stripe/events",', 'path: "stripe/events", // the signed endpoint, {not} a "path"')
      .replace("expect: { status: 401, events: [] },", "expect: { status: 202 }, /* was wrong */");
    expect(edited).not.toBe(original);
    writeFileSync(file, edited);
    const before = snapshot(dir);
    const run = await runCli(["test", "hooks", "--update", "--accept-failures", "--config", DEMO_CONFIG], {
      cwd: dir,
    });
    expect(run.code).toBe(0);
    expect(changedFiles(before, dir)).toEqual(["hooks/stripe/events-stale-timestamp.json5"]);
    expect(readFileSync(file, "utf8")).toBe(
      edited.replace("expect: { status: 202 },", "expect: { status: 401, events: [] },"),
    );
    expect(run.stdout).toMatch(
      /rewrote 1 fixture\(s\): hooks\/stripe\/events-stale-timestamp\.json5; left \d+ as they were/,
    );
    const rerun = await runCli(["test", "hooks", "--config", DEMO_CONFIG], { cwd: dir });
    expect(rerun.code).toBe(0);
  });

  it("adds an expect block to a fixture without one, as JSON in a .json file and JSON5 in a .json5 file", async () => {
    const dir = makeTempDir("test-update-");
    const body = path.join(FIXTURES, "payloads/github/push.json");
    const json = path.join(dir, "push.json");
    const json5 = path.join(dir, "push.json5");
    writeFileSync(
      json,
      `{\n  "name": "push as json",\n  "request": { "path": "github/push", "bodyFile": ${JSON.stringify(body)} }\n}\n`,
    );
    writeFileSync(
      json5,
      `// A push, by hand.\n{\n  name: "push as json5",\n  request: { path: "github/push", bodyFile: ${JSON.stringify(body)} }, // trailing comment\n}\n`,
    );
    const run = await runCli(["test", dir, "--update", "--config", DEMO_CONFIG], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("rewrote 2 fixture(s)");
    const asJson = JSON.parse(readFileSync(json, "utf8"));
    expect(asJson.expect.status).toBe(200);
    const text5 = readFileSync(json5, "utf8");
    expect(text5.startsWith('// A push, by hand.\n{\n  name: "push as json5",\n')).toBe(true);
    expect(text5).toContain("}, // trailing comment\n  expect: {\n    status: 200,");
    expect(JSON5.parse(text5).expect.status).toBe(200);
    const rerun = await runCli(["test", dir, "--config", DEMO_CONFIG], { cwd: dir });
    expect(rerun.stdout.trim().split("\n").at(-1)).toBe("2 passed, 0 failed");
  });
});

describe("setting a fixture's field in its text", () => {
  const json5 = { json: false };

  it.each([
    [
      "replaces a value in place",
      "{ a: 1, expect: { status: 1 }, b: 2 }",
      "{ a: 1, expect: { status: 202 }, b: 2 }",
    ],
    [
      "skips strings and comments that hold braces, quotes and the key's name",
      '{\n  s: "} expect: \\" {", // expect: }\n  /* { */ expect: [1, {x: "]"}],\n}\n',
      '{\n  s: "} expect: \\" {", // expect: }\n  /* { */ expect: { status: 202 },\n}\n',
    ],
    [
      "adds the field after a last member that has a comma",
      "{\n  a: 1,\n}\n",
      "{\n  a: 1,\n  expect: { status: 202 },\n}\n",
    ],
    [
      "adds a comma to a last member without one",
      "{\n  a: 1\n}\n",
      "{\n  a: 1,\n  expect: { status: 202 }\n}\n",
    ],
    ["quoted keys", "{ 'expect': 0 }", "{ 'expect': { status: 202 } }"],
  ])("%s", (_name, text, wanted) => {
    expect(setTopLevelField(text, "expect", { status: 202 }, json5)).toBe(wanted);
  });

  it("breaks what does not fit on a line into one member per line, indented like its neighbours", () => {
    const value = { status: 200, events: [{ event: "x", match: { text: "y".repeat(90) } }] };
    const text = setTopLevelField('{\n    name: "n",\n}\n', "expect", value, json5);
    expect(text).toBe(
      `{\n    name: "n",\n    expect: {\n      status: 200,\n      events: [\n        {\n          event: "x",\n          match: {\n            text: "${"y".repeat(90)}",\n          },\n        },\n      ],\n    },\n}\n`,
    );
    expect(JSON5.parse(text).expect).toEqual(value);
    const json = setTopLevelField('{\n  "name": "n"\n}\n', "expect", value, { json: true });
    expect(JSON.parse(json).expect).toEqual(value);
  });
});

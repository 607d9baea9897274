/** @module A reader that goes away (`hooks journal list | head -1`) ends the real CLI quietly: exit 0, nothing on stderr. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, spawnCli } from "../helpers/cli.js";
import { DEMO_VARIABLES, FIXTURES } from "../helpers/repo.js";

afterEach(cleanupCli);

/** A journal of `count` finished wakes, written the way the journal writes its segments. */
function writeJournal(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = now - (count - i) * 1000;
    const id = `req-${i}`;
    const response = { status: 200, contentType: "application/json", body: "{}" };
    lines.push(JSON.stringify({ t: "admitted", id, at, hook: "wake", response, events: [], runs: [] }));
    lines.push(JSON.stringify({ t: "done", id, at: at + 1 }));
  }
  writeFileSync(path.join(dir, "journal-00000001.jsonl"), `${lines.join("\n")}\n`, { mode: 0o600 });
}

/** As `| head -1`: the first line is read, then the pipe is closed while the CLI still has more to print. */
async function readOneLineThenClose(args: string[], env: Record<string, string> = {}) {
  const cli = spawnCli(args, { env });
  await cli.waitFor(/\n/);
  cli.child.stdout!.destroy();
  const exit = await cli.exited;
  return { ...exit, stderr: cli.stderr() };
}

describe("a closed pipe", () => {
  it("journal list | head -1: exit 0, nothing on stderr", async () => {
    const dir = makeTempDir("closed-pipe-");
    // About 200 KB of lines: more than a pipe holds, so the CLI is still writing when the reader leaves.
    writeJournal(path.join(dir, "journal"), 3000);
    const result = await readOneLineThenClose([
      "journal",
      "list",
      "--dir",
      path.join(dir, "journal"),
      "--limit",
      "3000",
    ]);
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, signal: null });
  });

  it("test | head -1: exit 0, nothing on stderr", async () => {
    // Every variable the demo names is set, so no note about stand-ins goes to stderr.
    const env = Object.fromEntries(
      DEMO_VARIABLES.map((name) => [name, `closed-pipe-${name.toLowerCase()}-0123456789`]),
    );
    env.STANDARD_WEBHOOK_SECRET = `whsec_${Buffer.from("closed-pipe-standard-webhooks-key").toString("base64")}`;
    const result = await readOneLineThenClose(
      ["test", path.join(FIXTURES, "hooks"), "--config", path.join(FIXTURES, "demo/gateway.json5")],
      env,
    );
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, signal: null });
  });

  it("a closed stderr: the note about stand-ins is dropped, the run ends as it would have (exit 0, every line on stdout)", async () => {
    // The demo's secrets are not set, so the first thing the run writes is its note on stderr, into a closed pipe.
    const unset = Object.fromEntries(DEMO_VARIABLES.map((name) => [name, undefined]));
    const cli = spawnCli(
      ["test", path.join(FIXTURES, "hooks"), "--config", path.join(FIXTURES, "demo/gateway.json5")],
      { env: unset },
    );
    cli.child.stderr!.destroy();
    expect(await cli.exited).toMatchObject({ code: 0, signal: null });
    expect(cli.stdout()).toMatch(/^\d+ passed, 0 failed$/m);
  });
});

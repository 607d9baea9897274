/** @module The embedded default: `hooks serve` with no config serves the bundled demo, and its printed curl line works. */
import { execFile, spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, startServe } from "../helpers/cli.js";
import { baseConfig, postJson, readState, TOKEN, writeConfig } from "./support.js";

afterEach(cleanupCli);

const HAS_CURL = spawnSync("curl", ["--version"]).status === 0;

/** Splits the printed command the way a POSIX shell would for the quoting it uses (single quotes only). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (const match of line.matchAll(pattern))
    words.push(match[1] !== undefined ? match[1].replace(/'\\''/g, "'") : match[2]!);
  return words;
}

/** Runs the pasted line: with curl through a shell when there is one, else replayed with fetch. */
async function runPasted(line: string): Promise<{ status: number; body: any }> {
  if (HAS_CURL) {
    const output = await new Promise<string>((resolve, reject) =>
      execFile("sh", ["-c", `${line} -w '\\n%{http_code}'`], (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    const lines = output.trimEnd().split("\n");
    return { status: Number(lines.at(-1)), body: JSON.parse(lines.slice(0, -1).join("\n")) };
  }
  const words = shellWords(line);
  const headers: Record<string, string> = {};
  let body = "";
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "-H") {
      const [name, ...value] = words[++i]!.split(":");
      headers[name!.trim()] = value.join(":").trim();
    }
    if (words[i] === "-d") body = words[++i]!;
  }
  const url = words.find((word) => word.startsWith("http"))!;
  const response = await fetch(url, { method: "POST", headers, body });
  return { status: response.status, body: await response.json() };
}

describe("embedded default", () => {
  it("serves the bundled demo with a generated token, and the printed curl line returns 200", async () => {
    const cwd = makeTempDir();
    const gateway = await startServe([], { cwd, env: { HOOKS_TOKEN: "" } });
    const banner = gateway.stdout();
    expect(banner).toContain("fixtures/demo/gateway.json5 (bundled demo");
    const port = new URL(gateway.url).port;
    const [, token] = banner.match(/token generated for this run: (\S+)/)!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const endpoint of [
      "/hooks/wake",
      "/hooks/agent",
      "/hooks/github/push",
      "/hooks/alerts",
      "/hooks/mailbox",
    ]) {
      expect(banner).toContain(`${gateway.url}${endpoint}`);
    }
    const curl = banner
      .split("\n")
      .find((line) => line.trim().startsWith("curl "))!
      .trim();
    expect(curl).toContain(token);
    expect(curl).toContain(`:${port}/hooks/wake`);

    const result = await runPasted(curl);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ ok: true, mode: "now" });

    // State goes to ./.hooks-state under the working directory by default.
    await gateway.waitForLog((r) => r.msg === "heartbeat" && Number(r.drained) > 0);
    const transcript = readState(path.join(cwd, ".hooks-state"), (reader) => reader.transcript());
    expect(
      transcript.some((entry) => entry.kind === "system-event" && entry.text.includes("Hello from curl")),
    ).toBe(true);
    // Printed once in the banner for the person at the terminal, never in a log line.
    expect(gateway.logs().some((record) => JSON.stringify(record).includes(token!))).toBe(false);
  });

  it("serves the demo's sample mappings: the template and the TypeScript transform", async () => {
    const cwd = makeTempDir();
    const gateway = await startServe([], { cwd, env: { HOOKS_TOKEN: TOKEN } });
    expect(gateway.stdout()).not.toContain("token generated");
    // A token the user set is referred to in the curl line, never printed.
    expect(gateway.stdout()).not.toContain(TOKEN);
    expect(gateway.stdout()).toContain('"Authorization: Bearer $HOOKS_TOKEN"');

    const push = await postJson(`${gateway.url}/hooks/github/push`, {
      pusher: { name: "ann" },
      commits: [{}, {}],
      repository: { full_name: "acme/site" },
      head_commit: { message: "fix footer" },
    });
    expect(push).toMatchObject({ status: 200, body: { mappingId: "github-push" } });
    const alert = await postJson(`${gateway.url}/hooks/alerts`, {
      severity: "critical",
      service: "db",
      summary: "disk full",
    });
    expect(alert).toMatchObject({ status: 202, body: { mappingId: "alert" } });
    const resolved = await postJson(`${gateway.url}/hooks/alerts`, { status: "resolved" });
    expect(resolved.status).toBe(204);

    await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === alert.body.runId);
    const outbox = readState(path.join(cwd, ".hooks-state"), (reader) => reader.outbox());
    expect(outbox[0]).toMatchObject({ channel: "telegram", to: "@demo_chat", mappingId: "alert" });
    expect(outbox[0]!.text).toMatch(/^\[CRITICAL\] db: disk full/);
    await gateway.waitForLog((r) => r.msg === "heartbeat" && String(r.reasons).includes("hook:wake"));
    const transcript = readState(path.join(cwd, ".hooks-state"), (reader) => reader.transcript());
    expect(
      transcript.some(
        (entry) =>
          entry.kind === "system-event" &&
          entry.text.includes("ann pushed 2 commit(s) to acme/site: fix footer"),
      ),
    ).toBe(true);
  });

  it("prefers ./gateway.json5 over the demo", async () => {
    const cwd = makeTempDir();
    writeConfig(cwd, baseConfig({}, { path: "/intake" }));
    const gateway = await startServe(["--state-dir", path.join(cwd, "state")], { cwd });
    expect(gateway.stdout()).toContain(`${path.join(cwd, "gateway.json5")} (./gateway.json5)`);
    expect(gateway.stdout()).toContain(`${gateway.url}/intake/wake`);
  });
});

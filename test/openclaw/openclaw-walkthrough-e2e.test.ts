/** @module docs/openclaw.md's walkthrough, run as written in a fresh home: Node 26 and OpenClaw from the registry, the packed plugin installed by OpenClaw, the smallest config, the gateway, a wake, and where to see it. */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, isOpenClawReady, killTree } from "../../scripts/openclaw-launch.mjs";
import { compareLines } from "../helpers/doc-answers.js";
import { at, readDocBlocks, type ShellCommand, shellCommands, stripComment } from "../helpers/doc-blocks.js";
import { openClawSkipReason } from "../helpers/openclaw-gateway.js";
import { REPO_ROOT } from "../helpers/repo.js";

const PAGE = "docs/openclaw.md";
const SECTION = "## From nothing to a first wake";
/** The marker reason that puts a block in the walkthrough. */
const WALKTHROUGH = /runs this walkthrough as written/;
/** The port the page gives OpenClaw; the test gives it a free one instead (never a fixed port in a test). */
const PAGE_PORT = "18800";
/** Installing Node 26 and OpenClaw takes 40–60 s with npm's cache warm (`.ci/run` warms it), minutes without. */
const COMMAND_TIMEOUT_MS = 300_000;
const READY_TIMEOUT_MS = 120_000;
const SERVING = "webhook intake serving /intake";

/** The page's walkthrough commands, in order: the shell blocks of its first section that carry the marker. */
function walkthrough(): ShellCommand[] {
  const text = readFileSync(path.join(REPO_ROOT, PAGE), "utf8").split("\n");
  const start = text.indexOf(SECTION) + 1;
  const end = text.findIndex((line, i) => i >= start && line.startsWith("## "));
  return readDocBlocks(REPO_ROOT, PAGE)
    .filter((block) => block.line > start && block.line < end + 1)
    .filter((block) => block.marker?.kind === "not run" && WALKTHROUGH.test(block.marker.reason))
    .flatMap(shellCommands);
}

/** The caller's environment without what would steer npm, Node or OpenClaw away from what a user's shell has. */
function userEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|VITEST|OPENCLAW_)|^NODE_(OPTIONS|PATH|V8_COVERAGE)$/i.test(key))
      continue;
    env[key] = value;
  }
  // npm's download cache stays the machine's, as it would for a user: the packages are not fetched twice.
  const cache = process.env.npm_config_cache ?? path.join(os.homedir(), ".npm");
  return { ...env, HOME: home, USERPROFILE: home, TMPDIR: path.join(home, "tmp"), npm_config_cache: cache };
}

describe.skipIf(openClawSkipReason !== undefined)("the OpenClaw walkthrough in docs/openclaw.md", () => {
  let dir: string;
  let home: string;
  let env: Record<string, string>;
  let port: string;
  let gateway: ChildProcess | undefined;
  let gatewayLog: string;
  let exited: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hooks-walkthrough-"));
    home = path.join(dir, "home");
    await mkdir(path.join(home, "tmp"), { recursive: true });
    env = userEnv(home);
    port = String(await freePort());
    gatewayLog = path.join(dir, "gateway.log");
  });

  afterAll(async () => {
    if (gateway?.pid !== undefined && gateway.exitCode === null && gateway.signalCode === null) {
      killTree(gateway.pid, "SIGTERM");
      const timer = setTimeout(() => killTree(gateway!.pid!, "SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  /** One command in bash, in the checkout, with what earlier commands exported (a user's one terminal). */
  const run = (command: string) =>
    new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const state = path.join(dir, "exports.sh");
      const script = `[ -f "${state}" ] && source "${state}"\ncd "${REPO_ROOT}"\n${command}\nrc=$?\nexport -p > "${state}"\nexit $rc\n`;
      const child = spawn("bash", ["-o", "pipefail", "-c", script], { env, detached: true });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      const timer = setTimeout(() => killTree(child.pid!, "SIGKILL"), COMMAND_TIMEOUT_MS);
      child.once("error", reject);
      child.once("close", (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });

  /** `openclaw gateway run` stays in the foreground: started in the background here, with the same terminal state. */
  const startGateway = async (command: string) => {
    const state = path.join(dir, "exports.sh");
    const log = createWriteStream(gatewayLog);
    gateway = spawn("bash", ["-c", `source "${state}"\ncd "${REPO_ROOT}"\nexec ${command}`], {
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    gateway.stdout!.pipe(log);
    gateway.stderr!.pipe(log);
    exited = new Promise((resolve) => gateway!.once("exit", () => resolve()));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const url = `http://127.0.0.1:${port}`;
    while (Date.now() < deadline) {
      if (gateway.exitCode !== null) break;
      if ((await isOpenClawReady(url)) && (await readFile(gatewayLog, "utf8")).includes(SERVING)) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(
      `the gateway did not get ready (${SERVING}) within ${READY_TIMEOUT_MS} ms:\n${(await readFile(gatewayLog, "utf8")).slice(-6_000)}`,
    );
  };

  it(
    "works verbatim from nothing: every command succeeds and prints what the page says",
    async () => {
      const commands = walkthrough();
      // The steps the page promises: install, pack and install the plugin, configure, start, wake, look.
      expect(
        commands.map((command) => stripComment(command.text).split(/\s+/).slice(0, 3).join(" ")),
      ).toEqual([
        "npm install --prefix",
        'export PATH="$HOME/openclaw/node_modules/.bin:$PATH"',
        "npm install --prefix",
        "npm pack --pack-destination",
        "openclaw plugins install",
        "(umask 077 &&",
        "openclaw config patch",
        "openclaw gateway run",
        "curl -sS -X",
        "node bin/hooks.js journal",
        "openclaw system heartbeat",
      ]);
      for (const command of commands) {
        const text = command.text.replaceAll(PAGE_PORT, port);
        const where = at(PAGE, command.line);
        if (/^openclaw gateway run\b/.test(text)) {
          await startGateway(text);
          continue;
        }
        const { code, output } = await run(text);
        expect(code, `${where}: ${command.text}\n${output.slice(-4_000)}`).toBe(0);
        if (command.answer) {
          const lines = output.trimEnd().split("\n");
          const difference = compareLines(command.answer.lines, lines);
          expect(difference, `${at(PAGE, command.answer.line)}: ${difference}\n${output}`).toBeUndefined();
        }
      }
      const tokenFile = path.join(home, ".openclaw", "hooks-intake.token");
      const token = (await readFile(tokenFile, "utf8")).trim();
      expect(token.length).toBeGreaterThan(30);
      // Only its owner may read it; the plugin refuses a secret file others can read.
      expect((await stat(tokenFile)).mode & 0o077).toBe(0);
      const log = await readFile(gatewayLog, "utf8");
      // The plugin came from the tarball OpenClaw installed into its own extensions folder, not from the checkout.
      expect(log).not.toMatch(/can't verify where this plugin came from/);
      expect(log).not.toContain(token);
    },
    6 * COMMAND_TIMEOUT_MS,
  );
});

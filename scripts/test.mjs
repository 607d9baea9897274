/**
 * @module `npm test`: builds dist/ if src/ changed, then runs the typecheck, the lint, vitest and the fixture
 * library side by side, and ends with one line per step; the exit code is non-zero when any step failed.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildDist } from "./build-dist.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "node_modules/.bin");

/**
 * tsc's incremental state, one per checkout. Not in node_modules/.cache: a git worktree may share its
 * node_modules with other checkouts through a symlink. A lost file only costs one full check.
 */
function buildInfoFile() {
  const dir = path.join(
    os.tmpdir(),
    `hooks-intake-tsc-${createHash("sha256").update(ROOT).digest("hex").slice(0, 12)}`,
  );
  mkdirSync(dir, { recursive: true });
  return path.join(dir, "typecheck.tsbuildinfo");
}

/**
 * The steps. vitest's output is live (it is most of the run and says what it is doing); the others are short, and
 * their output is printed after vitest's so that none lands in the middle of it.
 */
const STEPS = [
  {
    name: "typecheck",
    // Incremental: an unchanged project is checked in about a fifth of the CPU of a full check.
    command: [
      path.join(BIN, "tsc"),
      "-p",
      "tsconfig.json",
      "--noEmit",
      "--incremental",
      "--tsBuildInfoFile",
      buildInfoFile(),
    ],
    background: true,
  },
  { name: "lint", command: [path.join(BIN, "biome"), "check", "."], background: true },
  { name: "vitest", command: [path.join(BIN, "vitest"), "run", ...process.argv.slice(2)], background: false },
  {
    name: "fixtures",
    command: [
      process.execPath,
      "bin/hooks.js",
      "test",
      "fixtures",
      "--config",
      "fixtures/demo/gateway.json5",
    ],
    background: true,
  },
];

/** Runs one step; resolves with its exit code, time and (for a background step) its output. */
function run(step) {
  const started = Date.now();
  const [file, ...args] = step.command;
  const child = spawn(file, args, {
    cwd: ROOT,
    stdio: step.background ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  // The short steps yield to vitest's workers, whose tests wait on timers and sockets: they fill the idle moments.
  if (step.background) {
    try {
      os.setPriority(child.pid, 10);
    } catch {
      // Not allowed here: they run at the same priority, which only costs vitest some time.
    }
  }
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => {
    child.once("error", (error) =>
      resolve({ code: 1, ms: Date.now() - started, output: `${error.message}\n` }),
    );
    child.once("close", (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), signal, ms: Date.now() - started, output }),
    );
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

const build = buildDist(ROOT);
if (build.built) process.stdout.write(`dist built in ${seconds(build.ms)}\n`);
const results = await Promise.all(STEPS.map((step) => run(step)));

for (const [i, step] of STEPS.entries()) {
  const { output } = results[i];
  if (step.background && output.trim() !== "")
    process.stdout.write(`\n── ${step.name} ──\n${output.trimEnd()}\n`);
}
process.stdout.write("\n");
for (const [i, step] of STEPS.entries()) {
  const { code, signal, ms } = results[i];
  const status = code === 0 ? "ok" : `FAILED (${signal ?? `exit ${code}`})`;
  process.stdout.write(`${step.name.padEnd(10)} ${status.padEnd(18)} ${seconds(ms)}\n`);
}
process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;

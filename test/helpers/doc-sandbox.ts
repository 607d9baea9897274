/** @module A checkout of one's own for a doc page's commands: a temp dir that links the repository's bin, fixtures and node_modules (so `node bin/hooks.js` and `fixtures/…` work as in the docs), its own terminal, and the gateway `npm start` or `hooks serve` runs in it. */
import { execFile } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { makeTempDir, type Serve, startServe } from "./cli.js";
import { DocShell } from "./doc-shell.js";
import { REPO_ROOT } from "./repo.js";

/** What the docs write where a gateway listens; each run's real port is put in its place, both ways. */
export const DOC_ADDRESS = "127.0.0.1:18789";
/** What the docs write where the gateway's inspector listens (its own port, also a free one in a run). */
export const DOC_INSPECTOR_ADDRESS = "127.0.0.1:18790";

/** Linked into the sandbox: what the docs' commands reach for in a checkout (bin/hooks.js loads ../dist itself). */
const LINKED = ["bin", "fixtures", "node_modules", "package.json"];

/**
 * Every curl in the sandbox ends its output with the answer's status on a line of its own (from a curlrc, so the
 * commands stay as the docs write them); `curlOutput` takes it out again.
 */
const CURLRC = 'write-out = "\\n@@status %{http_code}@@\\n"\n';
const STATUS = /\n@@status (\d{3})@@\n/g;

/** What a curl printed as the user sees it, and the status of each request it made. */
export function curlOutput(stdout: string): { statuses: number[]; body: string } {
  const statuses = [...stdout.matchAll(STATUS)].map((match) => Number(match[1]));
  return { statuses, body: stdout.replace(STATUS, "") };
}

/** A user's environment before they export anything the docs ask for: none of the project's variables. */
function userEnv(curlHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    CURL_HOME: curlHome,
  };
  for (const name of Object.keys(env)) {
    if (/^HOOKS_|_SECRET$|_TOKEN$/.test(name)) delete env[name];
  }
  return env;
}

export class DocSandbox {
  readonly dir: string;
  readonly shell: DocShell;
  private gateway: Serve | undefined;

  constructor() {
    this.dir = makeTempDir("hooks-docs-");
    for (const name of LINKED) symlinkSync(path.join(REPO_ROOT, name), path.join(this.dir, name));
    const scratch = makeTempDir("hooks-docs-scratch-");
    writeFileSync(path.join(scratch, ".curlrc"), CURLRC);
    this.shell = new DocShell(this.dir, userEnv(scratch), scratch);
  }

  /** `host:port` of the running gateway, undefined when none runs. */
  get address(): string | undefined {
    return this.gateway ? new URL(this.gateway.url).host : undefined;
  }

  /** The gateway's stdout up to its first log line: the banner it printed when it started. */
  banner(): string[] | undefined {
    const lines = this.gateway?.stdout().split("\n");
    if (lines === undefined) return undefined;
    const end = lines.findIndex((line) => line.startsWith("{"));
    return (end === -1 ? lines : lines.slice(0, end)).map((line) =>
      this.toDocAddress(line).replace(
        /^inspector: http:\/\/[^/]+\//,
        `inspector: http://${DOC_INSPECTOR_ADDRESS}/`,
      ),
    );
  }

  /** The real address written as the docs write it. */
  toDocAddress(text: string): string {
    const address = this.address;
    return address ? text.replaceAll(address, DOC_ADDRESS) : text;
  }

  /** `hooks serve <args>` in this process, with the terminal's exported variables, after stopping the one before. */
  async serve(args: readonly string[]): Promise<void> {
    await this.stopGateway();
    const env: Record<string, string | undefined> = await this.shell.env();
    for (const name of Object.keys(process.env)) if (!(name in env)) env[name] = undefined;
    // The docs show what a person sees in a terminal.
    this.gateway = await startServe(args, { cwd: this.dir, env, terminal: true });
  }

  async stopGateway(): Promise<void> {
    const gateway = this.gateway;
    this.gateway = undefined;
    if (!gateway) return;
    gateway.signal("SIGTERM");
    await gateway.exited;
  }

  /** `node bin/hooks.js <args>` as a process of its own, from the terminal with its exported variables. */
  async hooks(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = await this.shell.env();
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["bin/hooks.js", ...args],
        { cwd: this.dir, env, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** Writes a file the docs show, relative to the sandbox. */
  writeFile(relative: string, text: string): string {
    const file = path.join(this.dir, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  }

  /** Stops the gateway and the terminal; the temp dirs go with the cli helper's `cleanupCli`. */
  async close(): Promise<void> {
    await this.stopGateway();
    await this.shell.close();
  }
}

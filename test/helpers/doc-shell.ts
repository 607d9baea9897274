/** @module One bash for a doc page, as a user's terminal: the commands a page shows run in it one after another, so a variable set by one (`H=…`, `export …`) is there for the next. */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

const COMMAND_WAIT_MS = 30_000;

export class DocShell {
  private readonly child: ChildProcess;
  private output = "";
  /** bash's own complaints (a syntax error is reported before a command's redirection applies). */
  private shellErrors = "";
  private exited = false;
  private readonly changed = new Set<() => void>();

  /** bash without profile or rc files, in `cwd`, with exactly `env`. `scratch` holds each command's stderr. */
  constructor(
    private readonly cwd: string,
    env: NodeJS.ProcessEnv,
    private readonly scratch: string,
  ) {
    this.child = spawn("bash", ["--noprofile", "--norc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.shellErrors += chunk.toString();
    });
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const listener of [...this.changed]) listener();
    });
    this.child.once("exit", () => {
      this.exited = true;
      for (const listener of [...this.changed]) listener();
    });
  }

  /** Runs `command` (stdin closed, stderr kept apart) and resolves when it has finished. */
  async run(command: string, waitMs = COMMAND_WAIT_MS): Promise<ShellResult> {
    const id = randomUUID();
    const errFile = path.join(this.scratch, `${id}.err`);
    const done = `@@done-${id}`;
    // The group keeps the command in this shell (an `export` stays); the newline before `}` ends a heredoc.
    this.child.stdin?.write(`{ ${command}\n} </dev/null 2>'${errFile}'; printf '\\n${done} %d\\n' "$?"\n`);
    const end = new RegExp(`\\n${done} (\\d+)\\n`);
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const found = end.exec(this.output);
        if (found) finish(() => resolve(found));
        else if (this.exited) finish(() => reject(new Error(`the shell exited while running: ${command}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no end within ${waitMs} ms of: ${command}\n${this.output}`))),
        waitMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.changed.delete(check);
        settle();
      };
      this.changed.add(check);
      check();
    });
    const stdout = this.output.slice(0, match.index);
    this.output = this.output.slice(match.index + match[0].length);
    let stderr = this.shellErrors;
    this.shellErrors = "";
    if (existsSync(errFile)) stderr += readFileSync(errFile, "utf8");
    rmSync(errFile, { force: true });
    return { code: Number(match[1]), stdout, stderr };
  }

  /** The shell's exported variables now: what a program started from this terminal would get. */
  async env(): Promise<Record<string, string>> {
    const { stdout } = await this.run("env -0");
    const env: Record<string, string> = {};
    for (const entry of stdout.split("\0")) {
      const equals = entry.indexOf("=");
      if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
    }
    // bash's own bookkeeping, not something the user exported.
    for (const name of ["_", "SHLVL", "PWD", "OLDPWD"]) delete env[name];
    return env;
  }

  get directory(): string {
    return this.cwd;
  }

  /** Ends the shell (by its PID) and waits for it. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin?.end();
    this.child.kill("SIGKILL");
    await exited;
  }
}

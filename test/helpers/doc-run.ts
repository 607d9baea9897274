/** @module Runs a doc page's commands as a user would, in a sandbox of its own, and checks the answer the page prints under each against the real one; a difference is an error naming the page and line. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { compareAnswer, compareLines, parseAnswer } from "./doc-answers.js";
import {
  at,
  type DocBlock,
  isCurlLine,
  isRunBlock,
  readDocBlocks,
  type ShellCommand,
  shellCommands,
  stripComment,
} from "./doc-blocks.js";
import { curlOutput, DOC_ADDRESS, DocSandbox } from "./doc-sandbox.js";

/** A command line with nothing for a shell to do (no variables, quotes, globs, pipes): run without one. */
const PLAIN_WORDS = /^[\w./:=@,+-]+(?: +[\w./:=@,+-]+)*$/;
/** `npm install && npm start`: the checkout is installed already, and `npm test` is the run this is part of. */
const NPM = /^npm (?:install|ci|start|test)(?: && npm (?:install|ci|start|test))*$/;

/** Secrets whose sender issues them as `whsec_<base64>` (the Standard Webhooks scheme refuses any other shape). */
const WHSEC = `whsec_$(node -p 'require("node:crypto").randomBytes(24).toString("base64")')`;
const ISSUED_SECRETS: Record<string, string> = {
  STANDARD_WEBHOOK_SECRET: WHSEC,
  STRIPE_WEBHOOK_SECRET: WHSEC,
};

export interface PageReport {
  /** Commands run, files written and outputs compared. */
  steps: number;
}

export async function runDocPage(root: string, file: string): Promise<PageReport> {
  const runner = new PageRunner(file);
  try {
    for (const block of readDocBlocks(root, file).filter(isRunBlock)) await runner.block(block);
  } finally {
    await runner.sandbox.close();
  }
  return { steps: runner.steps };
}

class PageRunner {
  readonly sandbox = new DocSandbox();
  steps = 0;

  constructor(private readonly file: string) {}

  private fail(line: number, message: string): never {
    throw new Error(`${at(this.file, line)}: ${message}`);
  }

  async block(block: DocBlock): Promise<void> {
    const marker = block.marker?.kind === "run" ? block.marker : undefined;
    for (const name of marker?.exported ?? []) await this.export(name, block.line - 1);
    if (marker?.againstNpmStart && this.sandbox.address === undefined) await this.serve([], block.line - 1);
    this.steps++;
    if (marker?.file) return this.writeFile(block);
    if (marker?.output) return this.output(block);
    for (const command of shellCommands(block)) await this.command(command);
  }

  /**
   * What a reader who exported NAME did, unless NAME is set already: `export NAME="$(node bin/hooks.js token)"`, or
   * for a secret a provider hands out in a shape of its own, a value of that shape.
   */
  private async export(name: string, line: number): Promise<void> {
    if ((await this.sandbox.shell.env())[name] !== undefined) return;
    const value = ISSUED_SECRETS[name] ?? "$(node bin/hooks.js token)";
    const result = await this.sandbox.shell.run(`export ${name}="${value}"`);
    if (result.code !== 0) this.fail(line, `could not export ${name}: ${result.stderr}`);
  }

  private async serve(args: readonly string[], line: number): Promise<void> {
    try {
      await this.sandbox.serve(args);
    } catch (error) {
      this.fail(line, `the gateway did not start: ${(error as Error).message}`);
    }
  }

  /** A block that is a file: written where its first comment line says, then the edit its comments ask for. */
  private writeFile(block: DocBlock): void {
    const target = /((?:[\w.-]+\/)+[\w.-]+\.\w+)/.exec(block.lines[0] ?? "")?.[1];
    if (target === undefined) this.fail(block.line, "a file block names its path in its first comment line");
    this.sandbox.writeFile(target, `${block.lines.join("\n")}\n`);
    const comments: string[] = [];
    for (const line of block.lines) {
      const comment = /^\s*(?:\/\/|#)\s?(.*)$/.exec(line);
      if (!comment) break;
      comments.push(comment[1]!.trim());
    }
    // "… in my-hooks/gateway.json5 replace messageTemplate: "…" with transform: { … }": done as a reader would.
    const edit = /\bin (\S+) replace (\w+): "…" with (.+)$/.exec(comments.join(" "));
    if (!edit) return;
    const [, configFile, field, replacement] = edit;
    const file = path.join(this.sandbox.dir, configFile!);
    const text = readFileSync(file, "utf8");
    const pattern = new RegExp(`\\b${field}:\\s*"(?:[^"\\\\]|\\\\.)*"`, "g");
    if ((text.match(pattern) ?? []).length !== 1) {
      this.fail(block.line, `${configFile} does not have exactly one ${field} to replace`);
    }
    writeFileSync(file, text.replace(pattern, replacement!.trim()));
  }

  /** A block that is the banner of the running gateway; its curl line is run when the text after says its answer. */
  private async output(block: DocBlock): Promise<void> {
    if (this.sandbox.address === undefined) await this.serve([], block.line);
    const banner = this.sandbox.banner() ?? [];
    const problem = compareLines(block.lines, banner);
    if (problem) this.fail(block.line, `the gateway printed something else when it started: ${problem}`);
    const answer = /`(\d{3}(?: [^`]*)?)`/.exec(block.after)?.[1];
    if (answer === undefined) return;
    const curl = banner.find((line) => line.trim().startsWith("curl "));
    if (curl === undefined) this.fail(block.line, "the output has no curl line to run");
    const result = await this.sandbox.shell.run(curl.trim().replaceAll(DOC_ADDRESS, this.sandbox.address!));
    const { statuses, body } = curlOutput(this.sandbox.toDocAddress(result.stdout));
    const differs = compareAnswer(parseAnswer([answer]), { status: statuses[0], body });
    if (differs) this.fail(block.afterLine, `the banner's curl line answered otherwise: ${differs}`);
  }

  async command(command: ShellCommand): Promise<void> {
    this.steps++;
    const plain = command.text.split("\n").map(stripComment).join("\n").trim();
    const first = command.text.split("\n")[0]!.trim();
    if (NPM.test(plain)) {
      if (/\bnpm start\b/.test(plain)) await this.serve([], command.line);
      return;
    }
    const address = this.sandbox.address;
    if (command.text.includes(DOC_ADDRESS) && address === undefined) {
      this.fail(
        command.line,
        `no gateway is running for ${DOC_ADDRESS}: start one, or mark the block against npm start`,
      );
    }
    const id = plain.includes("<id>") ? await this.newestRequestId() : undefined;
    const fill = (text: string) => {
      const filled = id === undefined ? text : text.replaceAll("<id>", id);
      return address === undefined ? filled : filled.replaceAll(DOC_ADDRESS, address);
    };
    const words = fill(plain);
    const serve = /^node bin\/hooks\.js serve\b/.test(words);
    if (serve && PLAIN_WORDS.test(words)) return this.serve(words.split(/\s+/).slice(3), command.line);
    if (serve)
      this.fail(command.line, "a `hooks serve` line is run as plain words, with nothing for a shell to do");
    const result =
      words.startsWith("node bin/hooks.js ") && PLAIN_WORDS.test(words)
        ? await this.sandbox.hooks(words.split(/\s+/).slice(2))
        : await this.sandbox.shell.run(fill(command.text));
    const { statuses, body } = curlOutput(this.sandbox.toDocAddress(result.stdout));
    const where = `\`${first}\``;
    if (result.code !== 0)
      this.fail(command.line, `${where} exited with ${result.code}:\n${result.stderr}${body}`);
    const isCurl = command.text.split("\n").some(isCurlLine);
    if (command.answer === undefined) {
      if (isCurl)
        this.fail(command.line, `${where}: a curl that is run shows its answer under it (# 200 {…})`);
      return;
    }
    const expected = parseAnswer(command.answer.lines);
    if (expected.status !== undefined && statuses.length !== 1) {
      this.fail(
        command.answer.line,
        `${where}: a status in the answer needs exactly one request, got ${statuses.length}`,
      );
    }
    const differs = compareAnswer(expected, { status: statuses[0], body });
    if (differs) this.fail(command.answer.line, `${where} answered otherwise: ${differs}\n${result.stderr}`);
  }

  /** What a reader takes from `hooks journal list` for a `<id>` in a command: the newest request's id. */
  private async newestRequestId(): Promise<string> {
    const result = await this.sandbox.hooks(["journal", "list", "--json", "--limit", "1"]);
    const id = (JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as { requestId?: string })
      .requestId;
    if (id === undefined) throw new Error(`no request in the journal to take an id from:\n${result.stderr}`);
    return id;
  }
}

/** @module Reads a markdown page's fenced blocks, each with the `<!-- run … -->` / `<!-- not run: … -->` marker before it, and splits a shell block into the commands a user types and the answers printed under them. */
import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * What a marker says about the block after it. `<!-- run -->` runs a shell block; phrases after `run:`, separated
 * by `;`, say what a user would have done first or what the block is:
 * - `against npm start`: the demo gateway is running (started now if it is not);
 * - `with A, B exported`: the user exported these variables (each a new `node bin/hooks.js token`, unless set);
 * - `file`: the block is a file, written to the path its first comment line names;
 * - `output of npm start`: the block is what the running gateway printed when it started.
 * A ```sh block with a `curl` in it is run without a marker; `<!-- not run: <reason> -->` says why one is not.
 */
export type Marker =
  | { kind: "run"; againstNpmStart: boolean; exported: string[]; file: boolean; output: boolean }
  | { kind: "not run"; reason: string };

export interface DocBlock {
  /** The page, relative to the repository, for messages. */
  file: string;
  /** 1-based line of the block's first content line. */
  line: number;
  lang: string;
  lines: string[];
  marker: Marker | undefined;
  /** The paragraph after the block, up to the next blank line (where an output block's answer is written). */
  after: string;
  afterLine: number;
}

export interface ShellCommand {
  line: number;
  /** The command as written (continuation lines, heredocs and compound commands included). */
  text: string;
  /** The comment lines right under the command, without their `# `: what it prints. */
  answer: { line: number; lines: string[] } | undefined;
}

/** Where a doc problem is, in the form editors and terminals link: `docs/http.md:42`. */
export function at(file: string, line: number): string {
  return `${file}:${line}`;
}

const FENCE = /^```(\S*)\s*$/;
const MARKER = /^<!--\s*(run|not run)(?::\s*([\s\S]*?))?\s*-->$/;

function parseMarker(text: string, where: string): Marker {
  const match = MARKER.exec(text.trim());
  if (!match) throw new Error(`${where}: not a doc-run marker: ${text.trim()}`);
  const [, kind, rest = ""] = match;
  if (kind === "not run") {
    if (rest.trim() === "") throw new Error(`${where}: "not run" needs its reason: <!-- not run: … -->`);
    return { kind: "not run", reason: rest.trim() };
  }
  const marker = {
    kind: "run",
    againstNpmStart: false,
    exported: [] as string[],
    file: false,
    output: false,
  };
  for (const phrase of rest.split(";").map((part) => part.trim().replace(/\s+/g, " "))) {
    if (phrase === "") continue;
    const exported = /^with (.+) exported$/.exec(phrase);
    if (phrase === "against npm start") marker.againstNpmStart = true;
    else if (phrase === "file") marker.file = true;
    else if (phrase === "output of npm start") marker.output = true;
    else if (exported)
      marker.exported.push(...exported[1]!.split(/,\s*|\s+and\s+/).map((name) => name.trim()));
    else throw new Error(`${where}: unknown phrase in the run marker: "${phrase}"`);
  }
  return marker as Marker;
}

/** The fenced blocks of a page, in order, with their markers. `file` is relative to `root`. */
export function readDocBlocks(root: string, file: string): DocBlock[] {
  return parseDocBlocks(file, readFileSync(path.join(root, file), "utf8"));
}

export function parseDocBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  let pendingMarker: { marker: Marker; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim().startsWith("<!--") && /^<!--\s*(run|not run)\b/.test(line.trim())) {
      let comment = line;
      while (!comment.includes("-->") && i + 1 < lines.length) comment += `\n${lines[++i]}`;
      pendingMarker = { marker: parseMarker(comment, at(file, i + 1)), line: i + 1 };
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (line.trim() !== "" && pendingMarker) {
        throw new Error(
          `${at(file, pendingMarker.line)}: a doc-run marker must come right before a fenced block`,
        );
      }
      continue;
    }
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const after: string[] = [];
    let afterLine = i + 2;
    for (let j = i + 1; j < lines.length; j++) {
      if (lines[j]!.trim() === "") {
        if (after.length > 0) break;
        continue;
      }
      if (after.length === 0) afterLine = j + 1;
      after.push(lines[j]!);
    }
    blocks.push({
      file,
      line: start + 1,
      lang: fence[1] ?? "",
      lines: body,
      marker: pendingMarker?.marker,
      after: after.join("\n"),
      afterLine,
    });
    pendingMarker = undefined;
  }
  return blocks;
}

/** A shell block is run when marked `run`, or when it has a curl and no `not run` marker. */
export function isRunBlock(block: DocBlock): boolean {
  if (block.marker) return block.marker.kind === "run";
  return isShell(block) && block.lines.some(isCurlLine);
}

export function isShell(block: DocBlock): boolean {
  return ["sh", "bash", "shell", "console"].includes(block.lang);
}

export function isCurlLine(line: string): boolean {
  return /(^|[\s;&|(])curl\s/.test(stripComment(line));
}

/** The line without a trailing `# comment` (a `#` outside quotes, after whitespace or at the start). */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"') i++;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "\\") i++;
    else if (char === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

const OPENERS = /(?:^|[;&|]\s*|\bthen\s+|\bdo\s+)(for|while|until|if|case)\b/g;
const CLOSERS = /(?:^|[;&|]\s*)(done|fi|esac)\b/g;

/** How much a line opens (`for`, `if`, …) minus how much it closes (`done`, `fi`, …). */
function depthChange(line: string): number {
  const code = stripComment(line).trim();
  return (code.match(OPENERS)?.length ?? 0) - (code.match(CLOSERS)?.length ?? 0);
}

/**
 * The commands of a shell block: a line, with its `\` continuations, the heredoc it opens and the lines of a
 * compound command it starts (`for … done`). Comment lines right under a command (no blank line between) are its
 * answer; a comment after a blank line, or at the end of a command's line, is a remark.
 */
export function shellCommands(block: DocBlock): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const lines = block.lines;
  let last: ShellCommand | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === "") {
      last = undefined;
      continue;
    }
    if (trimmed.startsWith("#")) {
      const text = trimmed.replace(/^#\s?/, "");
      if (last) {
        last.answer ??= { line: block.line + i, lines: [] };
        last.answer.lines.push(text);
      }
      continue;
    }
    const start = i;
    const text = [line];
    let depth = depthChange(line);
    let heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(stripComment(line))?.[1];
    while (i + 1 < lines.length && (heredoc || depth > 0 || stripComment(lines[i]!).endsWith("\\"))) {
      const next = lines[++i]!;
      text.push(next);
      if (heredoc) {
        if (next.trim() === heredoc) heredoc = undefined;
        continue;
      }
      depth += depthChange(next);
      heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(stripComment(next))?.[1];
    }
    last = { line: block.line + start, text: text.join("\n"), answer: undefined };
    commands.push(last);
  }
  return commands;
}

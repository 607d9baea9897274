/** @module Sets one top-level field of a fixture file's text (`hooks test --update`), every other byte, comment and layout left as written. */
import JSON5 from "json5";

/** How the new value is written: `.json` files get JSON (quoted keys, no trailing commas), `.json5` files JSON5. */
export interface TextStyle {
  json: boolean;
}

/** Lines up to this width keep a small object or list on one line, as fixtures are written by hand. */
const WIDTH = 100;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
  /** Where the comma after the value is, if there is one. */
  comma: number | undefined;
}

/**
 * Finds the members of the top-level object in JSON5 text the caller has parsed already (so it is well formed):
 * strings, comments and nesting are skipped, never interpreted.
 */
class TopLevelScanner {
  private pos = 0;

  constructor(private readonly text: string) {}

  members(): { members: Member[]; close: number } {
    this.skipTrivia();
    this.expect("{");
    const members: Member[] = [];
    for (;;) {
      this.skipTrivia();
      if (this.text[this.pos] === "}") return { members, close: this.pos };
      const keyStart = this.pos;
      const key = this.readKey();
      this.skipTrivia();
      this.expect(":");
      this.skipTrivia();
      const valueStart = this.pos;
      this.skipValue();
      const member: Member = { key, keyStart, valueStart, valueEnd: this.pos, comma: undefined };
      members.push(member);
      this.skipTrivia();
      if (this.text[this.pos] === ",") {
        member.comma = this.pos;
        this.pos++;
      } else if (this.text[this.pos] !== "}") {
        this.fail();
      }
    }
  }

  private fail(): never {
    throw new Error(`unexpected text at offset ${this.pos}`);
  }

  private expect(char: string): void {
    if (this.text[this.pos] !== char) this.fail();
    this.pos++;
  }

  /** Whitespace and comments. */
  private skipTrivia(): void {
    const { text } = this;
    while (this.pos < text.length) {
      if (/\s/.test(text[this.pos]!)) this.pos++;
      else if (text.startsWith("//", this.pos)) {
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? text.length : end + 1;
      } else if (text.startsWith("/*", this.pos)) {
        const end = text.indexOf("*/", this.pos + 2);
        if (end === -1) this.fail();
        this.pos = end + 2;
      } else return;
    }
  }

  private skipString(): void {
    const quote = this.text[this.pos];
    this.pos++;
    while (this.pos < this.text.length) {
      const char = this.text[this.pos];
      if (char === "\\") this.pos += 2;
      else if (char === quote) {
        this.pos++;
        return;
      } else this.pos++;
    }
    this.fail();
  }

  private readKey(): string {
    const start = this.pos;
    const char = this.text[this.pos];
    if (char === '"' || char === "'") {
      this.skipString();
      return JSON5.parse(this.text.slice(start, this.pos)) as string;
    }
    while (this.pos < this.text.length && !/[\s:/]/.test(this.text[this.pos]!)) this.pos++;
    if (this.pos === start) this.fail();
    return this.text.slice(start, this.pos);
  }

  private skipValue(): void {
    const { text } = this;
    let depth = 0;
    while (this.pos < text.length) {
      const char = text[this.pos]!;
      if (char === '"' || char === "'") {
        this.skipString();
      } else if (text.startsWith("//", this.pos) || text.startsWith("/*", this.pos)) {
        if (depth === 0) return;
        this.skipTrivia();
      } else if (char === "{" || char === "[") {
        depth++;
        this.pos++;
      } else if (char === "}" || char === "]") {
        if (depth === 0) return;
        depth--;
        this.pos++;
      } else if (depth === 0 && (char === "," || /\s/.test(char))) {
        return;
      } else this.pos++;
      if (depth === 0 && (char === "}" || char === "]" || char === '"' || char === "'")) return;
    }
  }
}

function keyText(key: string, style: TextStyle): string {
  return !style.json && IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function scalarText(value: unknown, style: TextStyle): string {
  return style.json ? JSON.stringify(value) : JSON5.stringify(value, { quote: '"' });
}

function oneLine(value: unknown, style: TextStyle): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? "[]" : `[${value.map((item) => oneLine(item, style)).join(", ")}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([key, item]) => `${keyText(key, style)}: ${oneLine(item, style)}`).join(", ")} }`;
  }
  return scalarText(value, style);
}

/**
 * `value` as the text after `<indent><key>: ` (`used` characters of its line): on one line when it fits, else one
 * member per line, nested values likewise.
 */
function formatValue(value: unknown, indent: string, style: TextStyle, used = indent.length): string {
  const flat = oneLine(value, style);
  const composite = value !== null && typeof value === "object";
  if (!composite || used + flat.length <= WIDTH) return flat;
  const inner = `${indent}  `;
  const trailing = style.json ? "" : ",";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => `${inner}${formatValue(item, inner, style)}`);
    return `[\n${items.join(",\n")}${trailing}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  const lines = entries.map(([key, item]) => {
    const head = `${inner}${keyText(key, style)}: `;
    return `${head}${formatValue(item, inner, style, head.length)}`;
  });
  return `{\n${lines.join(",\n")}${trailing}\n${indent}}`;
}

/** The whitespace a line starts with. */
function indentOfLine(text: string, at: number): string {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * `text` (a JSON5 or JSON object) with its top-level `key` set to `value`: the old value's text is replaced in
 * place, or the field is added as the last member, indented like the others. Nothing else changes.
 */
export function setTopLevelField(text: string, key: string, value: unknown, style: TextStyle): string {
  const { members, close } = new TopLevelScanner(text).members();
  const existing = members.find((member) => member.key === key);
  if (existing) {
    const indent = indentOfLine(text, existing.keyStart);
    const used = existing.valueStart - (text.lastIndexOf("\n", existing.valueStart - 1) + 1);
    return (
      text.slice(0, existing.valueStart) +
      formatValue(value, indent, style, used) +
      text.slice(existing.valueEnd)
    );
  }
  const last = members.at(-1);
  const indent = last ? indentOfLine(text, last.keyStart) : "  ";
  const head = `${indent}${keyText(key, style)}: `;
  const trailing = !style.json && last?.comma !== undefined ? "," : "";
  const member = `${head}${formatValue(value, indent, style, head.length)}${trailing}`;
  // A last member without a comma needs one now; its own text (and any comment after it) stays as it was.
  const before =
    last && last.comma === undefined
      ? `${text.slice(0, last.valueEnd)},${text.slice(last.valueEnd, close)}`
      : text.slice(0, close);
  const lineStart = before.lastIndexOf("\n") + 1;
  const closeOnItsOwnLine = before.slice(lineStart).trim() === "";
  return closeOnItsOwnLine
    ? `${before.slice(0, lineStart)}${member}\n${before.slice(lineStart)}${text.slice(close)}`
    : `${before.trimEnd()}\n${member}\n${text.slice(close)}`;
}

/** @module Turns a config's JSON Schema into markdown: a table of fields per block, each nested block in a section of its own. */

/** The part of JSON Schema that `@valibot/to-json-schema` writes for the config. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  format?: string;
  additionalProperties?: JsonSchema | boolean;
}

/**
 * A group of fields with a section of its own: an object, a choice of objects told apart by a field (`kind`), or
 * the entry of a list of objects (`hooks.mappings[]`).
 */
export interface Block {
  path: string;
  description: string;
  /** The choice's field (`kind`) and, per value, what that choice is. */
  choices?: { field: string; options: Array<{ value: unknown; description: string }> };
  rows: Row[];
  children: Block[];
}

interface Row {
  field: string;
  type: string;
  default: string;
  description: string;
}

/** The objects a value may be: itself, or those among its alternatives. */
function objectOptions(node: JsonSchema): JsonSchema[] {
  if (node.properties) return [node];
  return (node.oneOf ?? node.anyOf ?? []).filter((option) => option.properties !== undefined);
}

/** Where the reference explains a secret field's forms: the page's section on secrets. */
export const SECRETS_ANCHOR = "#secrets-from-files-and-the-environment";

/** A secret field: its text, or an object that says where it is (`{ file }`, `{ env }`), explained once on the page. */
function isSecretField(node: JsonSchema): boolean {
  const alternatives = node.anyOf ?? node.oneOf ?? [];
  const only = (key: string) => (option: JsonSchema) =>
    option.properties !== undefined && Object.keys(option.properties).join() === key;
  return alternatives.some(only("file")) && alternatives.some(only("env"));
}

/** A field present in every option with a constant value in each: the one that tells the options apart. */
function discriminatorOf(options: JsonSchema[]): string | undefined {
  if (options.length < 2) return undefined;
  const first = options[0]!.properties!;
  return Object.keys(first).find((key) =>
    options.every((option) => option.properties?.[key]?.const !== undefined),
  );
}

/** A field as its block lists it. */
interface Field {
  path: string;
  node: JsonSchema;
  required: boolean;
  /** `With \`kind: "redis"\`. ` for a field that only some choices have, else empty. */
  only: string;
}

/**
 * Builds the block at `path` and, below it, its nested blocks. A field whose description is missing is added to
 * `undescribed`, so a new field cannot reach the reference without one. `sections` holds the blocks made so far by
 * their schema: one schema used in several places (a rate limit) gets one section, the others link to it.
 */
export function buildBlock(
  path: string,
  node: JsonSchema,
  description: string,
  undescribed: string[],
  sections: Map<string, string> = new Map(),
): Block {
  const options = objectOptions(node);
  const discriminator = discriminatorOf(options);
  const block: Block = { path, description, rows: [], children: [] };
  const choiceOf = (option: JsonSchema) => valueText(option.properties![discriminator!]!.const);
  if (discriminator !== undefined) {
    block.choices = {
      field: discriminator,
      options: options.map((option) => {
        if (!option.description) undescribed.push(`${path} (${discriminator}: ${choiceOf(option)})`);
        return { value: option.properties![discriminator]!.const, description: option.description ?? "" };
      }),
    };
  }
  const keys = [...new Set(options.flatMap((option) => Object.keys(option.properties!)))];
  for (const key of keys.filter((key) => key !== discriminator)) {
    const holders = options.filter((option) => option.properties![key] !== undefined);
    const some = holders.length < options.length;
    addField(
      block,
      {
        path: join(path, key),
        node: holders[0]!.properties![key]!,
        required: holders.every((option) => option.required?.includes(key)),
        only: some ? `With \`${discriminator}: ${holders.map(choiceOf).join(" or ")}\`. ` : "",
      },
      undescribed,
      sections,
    );
  }
  return block;
}

function addField(block: Block, field: Field, undescribed: string[], sections: Map<string, string>): void {
  const { path, node, only } = field;
  // A secret's `{ file }` and `{ env }` are the same on every secret field: one row, not a section each.
  const options = isSecretField(node) ? [] : objectOptions(node);
  const alternatives = node.oneOf ?? node.anyOf;
  const inner = options.length === 1 && !alternatives ? Object.entries(options[0]!.properties!) : [];
  if (inner.length === 1) {
    // An object that only wraps one field (`agents.defaults.models`) is that field's row, not a section of its own.
    const [key, wrapped] = inner[0]!;
    const required = field.required && !!options[0]!.required?.includes(key);
    addField(block, { path: join(path, key), node: wrapped, required, only }, undescribed, sections);
    return;
  }
  const entry =
    node.type === "array" && node.items && !isSecretField(node.items) && objectOptions(node.items).length > 0
      ? node.items
      : undefined;
  if (!node.description) undescribed.push(path);
  const row = { field: path, default: defaultText(field), type: typeText(node), description: "" };
  if (entry !== undefined || options.length > 0) {
    // Its fields get a section of their own, which its description opens; its row links there.
    const childPath = entry !== undefined ? `${path}[]` : path;
    const schema = JSON.stringify(entry ?? node);
    const earlier = sections.get(schema);
    if (earlier === undefined) {
      sections.set(schema, childPath);
      block.children.push(
        buildBlock(childPath, entry ?? node, node.description ?? "", undescribed, sections),
      );
    }
    row.type = entry !== undefined ? "list of objects" : typeText(node, { objects: "object" });
    const section = earlier ?? childPath;
    row.description = `${only}${earlier === undefined ? "See" : "As"} [\`${section}\`](#${slug(section)}).`;
  } else {
    row.description = only + (node.description ?? "");
  }
  block.rows.push(row);
}

function defaultText({ node, required }: Field): string {
  if (required) return "required";
  return node.default === undefined ? "unset" : code(valueText(node.default));
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/**
 * The block's section (unless it is the top level), then its nested blocks, objects first and list entries last.
 * Every section is at one level: its path already says where it sits.
 */
export function renderBlock(block: Block, heading: string): string[] {
  const lines: string[] = [];
  if (block.path !== "") lines.push(`${heading} \`${block.path}\``, "");
  if (block.description) lines.push(block.description, "");
  if (block.choices) {
    const { field, options } = block.choices;
    lines.push(`| \`${field}\` | meaning |`, "| --- | --- |");
    for (const option of options)
      lines.push(`| ${code(valueText(option.value))} | ${cell(option.description)} |`);
    lines.push("");
  }
  if (block.rows.length > 0) {
    lines.push("| field | type | default | meaning |", "| --- | --- | --- | --- |");
    for (const row of block.rows) {
      lines.push(
        `| \`${row.field}\` | ${cell(row.type)} | ${cell(row.default)} | ${cell(row.description)} |`,
      );
    }
    lines.push("");
  }
  const isList = (child: Block) => child.path.endsWith("[]");
  const ordered = [...block.children.filter((c) => !isList(c)), ...block.children.filter(isList)];
  for (const child of ordered) lines.push(...renderBlock(child, heading));
  return lines;
}

/**
 * The type column: the kind of value and its bounds. An object is its keys (`{ alias? }`), or just `object` when
 * its fields have a section of their own.
 */
export function typeText(node: JsonSchema, style: { objects?: "object" } = {}): string {
  const typeOf = (inner: JsonSchema) => typeText(inner, style);
  if (isSecretField(node)) {
    const text = (node.anyOf ?? node.oneOf)!.find((option) => !option.properties) ?? {};
    return `[secret](${SECRETS_ANCHOR}): ${typeOf(text)}, \`{ file }\` or \`{ env }\``;
  }
  if (node.const !== undefined) return code(valueText(node.const));
  if (node.enum) return either(node.enum.map((value) => code(valueText(value))));
  const alternatives = node.oneOf ?? node.anyOf;
  if (alternatives) {
    const [one, list] = alternatives;
    if (
      alternatives.length === 2 &&
      list?.type === "array" &&
      list.items &&
      typeOf(list.items) === typeOf(one!)
    ) {
      return `${typeOf(one!)}, or a list of them`;
    }
    return either([...new Set(alternatives.map(typeOf))]);
  }
  if (node.properties) {
    if (style.objects === "object") return "object";
    const keys = Object.keys(node.properties).map((key) => (node.required?.includes(key) ? key : `${key}?`));
    return `{ ${keys.join(", ")} }`;
  }
  switch (node.type) {
    case "array": {
      const items = node.items ?? {};
      const simple = items.type !== undefined && items.enum === undefined && items.const === undefined;
      return simple && !items.properties ? `${typeOf(items)}[]` : `list of ${typeOf(items)}`;
    }
    case "object":
      return typeof node.additionalProperties === "object"
        ? `{ [name]: ${typeOf(node.additionalProperties)} }`
        : "object";
    case "integer":
    case "number":
      return `${node.type}${bounds(node)}`;
    case "string":
      return node.format === "uri" ? "URL" : "string";
    case undefined:
      return "any";
    default:
      return node.type;
  }
}

function bounds(node: JsonSchema): string {
  const { minimum, maximum } = node;
  if (minimum !== undefined && maximum !== undefined) return ` ${minimum}–${maximum}`;
  if (minimum !== undefined) return ` ≥ ${minimum}`;
  if (maximum !== undefined) return ` ≤ ${maximum}`;
  return "";
}

/** `a`, `a or b`, `a, b or c`. */
function either(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** A value as it is written in a JSON5 config: `"batch"`, `["hook:"]`, `{ kind: "memory" }`. */
export function valueText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(valueText).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([key, item]) => `${key}: ${valueText(item)}`);
    return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
  }
  return JSON.stringify(value);
}

const code = (text: string) => `\`${text}\``;

/** A table cell: one line, and a `|` that does not end the cell. */
const cell = (text: string) => text.replace(/\s+/g, " ").replaceAll("|", "\\|");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** @module `{{ expr }}` templates: parsed once at startup, rendered per request without re-parsing. */
import type { IncomingHttpHeaders } from "node:http";
import { isCredentialHeader, isCredentialQuery } from "../safety/credentials.js";

export interface TemplateContext {
  payload: unknown;
  headers: IncomingHttpHeaders;
  query: Record<string, string>;
  /** The hook name. */
  path: string;
  /** ISO-8601 UTC time of the request. */
  now: string;
}

type Root = "payload" | "headers" | "query" | "path" | "now";
type Segment = string | number;

interface Expression {
  root: Root;
  segments: Segment[];
  /** Prototype segments and credentials (auth headers, `query.token`, bare `headers`/`query`) render empty. */
  blocked: boolean;
}

export interface CompiledTemplate {
  source: string;
  /** True when the template has at least one expression (its output depends on the request). */
  dynamic: boolean;
  render(context: TemplateContext): string;
}

export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
}

const BLOCKED = new Set(["__proto__", "prototype", "constructor"]);
const ROOTS = new Set<string>(["payload", "headers", "query", "path", "now"]);
const IDENT = /^[A-Za-z0-9_$-]+$/;

/** Parses `expr` of `{{ expr }}` into a root and segments. */
export function parseExpression(input: string): Expression {
  const expr = input.trim();
  if (expr === "") throw new TemplateSyntaxError("empty expression in {{ }}");
  const segments: Segment[] = [];
  let i = 0;
  let expectName = true;
  while (i < expr.length) {
    const ch = expr[i]!;
    if (ch === "[") {
      const close = expr.indexOf("]", i);
      if (close === -1) throw new TemplateSyntaxError(`unclosed "[" in "${expr}"`);
      const inner = expr.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) segments.push(Number(inner));
      else if (/^"[^"]*"$|^'[^']*'$/.test(inner)) segments.push(inner.slice(1, -1));
      else
        throw new TemplateSyntaxError(`"[${inner}]" in "${expr}" must be an index like [0] or a quoted key`);
      i = close + 1;
      expectName = false;
      continue;
    }
    if (ch === ".") {
      if (expectName) throw new TemplateSyntaxError(`unexpected "." in "${expr}"`);
      i++;
      expectName = true;
      continue;
    }
    if (!expectName) throw new TemplateSyntaxError(`unexpected "${ch}" in "${expr}"`);
    let end = i;
    while (end < expr.length && expr[end] !== "." && expr[end] !== "[") end++;
    const name = expr.slice(i, end);
    if (!IDENT.test(name)) throw new TemplateSyntaxError(`"${name}" in "${expr}" is not a valid name`);
    segments.push(name);
    i = end;
    expectName = false;
  }
  if (expectName) throw new TemplateSyntaxError(`"${expr}" ends with "."`);

  const first = segments[0];
  let root: Root = "payload";
  if (typeof first === "string" && ROOTS.has(first)) {
    root = first as Root;
    segments.shift();
  }
  if ((root === "path" || root === "now") && segments.length > 0) {
    throw new TemplateSyntaxError(`"${root}" has no fields ("${expr}")`);
  }
  if (root === "headers" && segments.length > 0 && typeof segments[0] === "string") {
    segments[0] = segments[0].toLowerCase();
  }
  const field = segments[0];
  const secret =
    (root === "headers" || root === "query") &&
    (field === undefined ||
      (typeof field === "string" &&
        // Credentials never render: a template must not copy the hook token into a message or a session key.
        (root === "headers" ? isCredentialHeader(field) : isCredentialQuery(field.toLowerCase()))));
  const blocked = secret || segments.some((segment) => typeof segment === "string" && BLOCKED.has(segment));
  return { root, segments, blocked };
}

function lookup(value: unknown, segments: readonly Segment[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== "object") return undefined;
    if (typeof segment === "number") {
      current = Array.isArray(current)
        ? current[segment]
        : (current as Record<string, unknown>)[String(segment)];
    } else {
      // Own properties only: nothing from a prototype chain ever renders.
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** Text of a value: missing/null → "", strings as they are, numbers/booleans as text, objects as JSON. */
export function stringifyValue(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

function evaluate(expression: Expression, context: TemplateContext): string {
  if (expression.blocked) return "";
  switch (expression.root) {
    case "path":
      return context.path;
    case "now":
      return context.now;
    case "query":
      return stringifyValue(lookup(context.query, expression.segments));
    case "headers": {
      const value = lookup(context.headers, expression.segments);
      return Array.isArray(value) && expression.segments.length === 1
        ? value.join(", ")
        : stringifyValue(value);
    }
    default:
      return stringifyValue(lookup(context.payload, expression.segments));
  }
}

/** Parses a template; throws TemplateSyntaxError for an unclosed `{{` or a bad expression. */
export function compileTemplate(source: string): CompiledTemplate {
  const parts: Array<string | Expression> = [];
  let cursor = 0;
  while (cursor < source.length) {
    const open = source.indexOf("{{", cursor);
    if (open === -1) {
      parts.push(source.slice(cursor));
      break;
    }
    const close = source.indexOf("}}", open + 2);
    if (close === -1) throw new TemplateSyntaxError(`unclosed "{{" at character ${open}`);
    if (open > cursor) parts.push(source.slice(cursor, open));
    parts.push(parseExpression(source.slice(open + 2, close)));
    cursor = close + 2;
  }
  const dynamic = parts.some((part) => typeof part !== "string");
  if (!dynamic) {
    const text = parts.join("");
    return { source, dynamic, render: () => text };
  }
  return {
    source,
    dynamic,
    render(context) {
      let out = "";
      for (const part of parts) out += typeof part === "string" ? part : evaluate(part, context);
      return out;
    },
  };
}

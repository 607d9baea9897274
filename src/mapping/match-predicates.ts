/** @module `match.headers` and `match.payload`: compiled once, checked only among the mappings of one path, each verdict in words. */
import type { ConfigIssue } from "../config/issues.js";

export type PayloadValue = string | number | boolean | null;

export interface HeaderPredicate {
  /** Lower-cased header name. */
  name: string;
  values: readonly string[];
}

export interface PayloadPredicate {
  /** As configured (`data.object.status`), for messages. */
  path: string;
  segments: readonly (string | number)[];
  values: readonly PayloadValue[];
}

const BLOCKED = new Set(["__proto__", "prototype", "constructor"]);

export function compileHeaderPredicates(headers: Record<string, string | string[]>): HeaderPredicate[] {
  return Object.entries(headers).map(([name, value]) => ({
    name: name.toLowerCase(),
    values: Array.isArray(value) ? value : [value],
  }));
}

/** `a.b[0].c` or `a.b.0.c`: names and array indexes. */
export function compilePayloadPredicates(
  payload: Record<string, PayloadValue | PayloadValue[]>,
  at: string,
  issues: ConfigIssue[],
): PayloadPredicate[] {
  return Object.entries(payload).map(([path, value]) => {
    const segments = path
      .replace(/\[(\d+)\]/g, ".$1")
      .split(".")
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
    if (segments.some((segment) => segment === "" || (typeof segment === "string" && BLOCKED.has(segment)))) {
      issues.push({
        path: `${at}.match.payload`,
        message: `"${path}" is not a dotted path into the body (a.b[0].c)`,
      });
    }
    return { path, segments, values: Array.isArray(value) ? value : [value] };
  });
}

/** The value at `segments`, reading own properties only. */
function readPath(body: unknown, segments: readonly (string | number)[]): unknown {
  let current = body;
  for (const segment of segments) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

const quote = (value: unknown) => (value === undefined ? "missing" : JSON.stringify(value));
const wanted = (values: readonly unknown[]) =>
  values.length === 1 ? quote(values[0]) : `one of ${values.map(quote).join(", ")}`;

/** Undefined when every header predicate holds, else why the first one does not. */
export function headerMismatch(
  predicates: readonly HeaderPredicate[],
  headers: Readonly<Record<string, string>>,
): string | undefined {
  for (const predicate of predicates) {
    const value = headers[predicate.name];
    if (value === undefined || !predicate.values.includes(value))
      return `header ${predicate.name} is ${quote(value)}, mapping wants ${wanted(predicate.values)}`;
  }
  return undefined;
}

/** Undefined when every payload predicate holds, else why the first one does not. */
export function payloadMismatch(predicates: readonly PayloadPredicate[], body: unknown): string | undefined {
  for (const predicate of predicates) {
    const value = readPath(body, predicate.segments);
    if (!predicate.values.some((candidate) => Object.is(candidate, value)))
      return `payload ${predicate.path} is ${quote(value)}, mapping wants ${wanted(predicate.values)}`;
  }
  return undefined;
}

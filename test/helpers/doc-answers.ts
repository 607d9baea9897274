/** @module Compares what a command printed with the answer a doc shows under it: a status and a JSON body matched by shape, or lines of text; `…` stands for what varies (ids, times, paths). */

/** An answer as a doc writes it: `200 {"ok":true,…}`, `204`, or lines of output. */
export interface Answer {
  status: number | undefined;
  body: string;
}

export function parseAnswer(lines: readonly string[]): Answer {
  const [first = "", ...rest] = lines;
  const status = /^(\d{3})(?:\s+(.*))?$/.exec(first.trim());
  if (!status) return { status: undefined, body: lines.join("\n") };
  return { status: Number(status[1]), body: [status[2] ?? "", ...rest].join("\n").trim() };
}

const ELLIPSIS = "…";

/** JSON where a bare `…` (outside strings) stands for any value: it becomes the string "…". */
function parseShapeJson(text: string): unknown {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === "\\") out += text[++i] ?? "";
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else out += char === ELLIPSIS ? `"${ELLIPSIS}"` : char;
  }
  return JSON.parse(out);
}

function textPattern(expected: string): RegExp {
  const parts = expected.split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/** Where `actual` differs from the shape `expected`, or undefined: `"…"` is any value, `"hook:…"` any such text. */
export function compareJson(expected: unknown, actual: unknown, at = "body"): string | undefined {
  if (expected === ELLIPSIS) return undefined;
  if (typeof expected === "string" && expected.includes(ELLIPSIS)) {
    return typeof actual === "string" && textPattern(expected).test(actual)
      ? undefined
      : `${at}: expected text like ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `${at}: expected ${expected.length} item(s), got ${JSON.stringify(actual)}`;
    }
    for (const [i, item] of expected.entries()) {
      const problem = compareJson(item, actual[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
      return `${at}: expected an object, got ${JSON.stringify(actual)}`;
    }
    const want = Object.keys(expected).sort();
    const got = Object.keys(actual).sort();
    if (want.join() !== got.join())
      return `${at}: expected the fields ${want.join(", ")}, got ${got.join(", ")}`;
    for (const key of want) {
      const problem = compareJson(
        (expected as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        `${at}.${key}`,
      );
      if (problem) return problem;
    }
    return undefined;
  }
  return Object.is(expected, actual)
    ? undefined
    : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** A line compared with runs of spaces as one (the docs align columns by hand). */
function normalize(line: string): string {
  return line.trim().replace(/\s+/g, " ");
}

/**
 * Where the lines of `actual` differ from `expected`, or undefined. In an expected line `…` stands for any text;
 * an expected line of only `…` stands for any number of lines.
 */
export function compareLines(expected: readonly string[], actual: readonly string[]): string | undefined {
  const want = expected.map(normalize);
  const got = actual.map(normalize);
  while (got.length > 0 && got.at(-1) === "") got.pop();
  const patterns = want.map((line) => (line === ELLIPSIS ? undefined : textPattern(line)));
  let furthest = { e: 0, a: 0 };
  const match = (e: number, a: number): boolean => {
    if (e > furthest.e || (e === furthest.e && a > furthest.a)) furthest = { e, a };
    if (e === want.length) return a === got.length;
    const pattern = patterns[e];
    if (pattern === undefined) {
      for (let k = a; k <= got.length; k++) if (match(e + 1, k)) return true;
      return false;
    }
    return a < got.length && pattern.test(got[a]!) && match(e + 1, a + 1);
  };
  if (match(0, 0)) return undefined;
  const { e, a } = furthest;
  const wanted = e < want.length ? `expected ${JSON.stringify(expected[e])}` : "expected nothing more";
  const seen = a < got.length ? `got ${JSON.stringify(actual[a])}` : "got nothing more";
  return `line ${e + 1} of the answer: ${wanted}, ${seen}\nthe whole output:\n${actual.join("\n")}`;
}

/** Where what a command printed differs from the doc's answer, or undefined. */
export function compareAnswer(
  expected: Answer,
  actual: { status: number | undefined; body: string },
): string | undefined {
  if (expected.status !== undefined && actual.status !== expected.status) {
    return `expected status ${expected.status}, got ${actual.status ?? "none"} (body: ${actual.body})`;
  }
  const body = expected.body.trim();
  if (body.startsWith("{") || body.startsWith("[")) {
    let shape: unknown;
    try {
      shape = parseShapeJson(body);
    } catch (error) {
      return `the doc's answer is not JSON (with … for what varies): ${(error as Error).message}`;
    }
    let value: unknown;
    try {
      value = JSON.parse(actual.body);
    } catch {
      return `expected a JSON body, got ${JSON.stringify(actual.body)}`;
    }
    return compareJson(shape, value);
  }
  return compareLines(body === "" ? [] : body.split("\n"), actual.body.split("\n"));
}

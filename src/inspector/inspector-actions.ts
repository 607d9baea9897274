/** @module What the page's actions make of a request's detail: a curl line without credentials, and a comparison of two requests. */
import { TRANSFER_HEADERS } from "../replay/fixture-file.js";
import { REDACTED } from "../safety/credentials.js";
import type { InspectorDetail } from "./inspector-source.js";
import { type DiffPart, diffLines } from "./line-diff.js";

/** Headers a curl line leaves to curl: a fixture's transfer headers, and curl's own user agent. */
const CURL_LEAVES: ReadonlySet<string> = new Set([...TRANSFER_HEADERS, "user-agent"]);

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The body's bytes as the sender sent them, near enough: JSON compact, a form encoded, text as it was. */
export function bodyText(body: InspectorDetail["body"]): string {
  if (body === undefined) return "";
  if (body.kind === "json") return JSON.stringify(body.value);
  if (body.kind === "form") {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(body.value as Record<string, string | string[]>))
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
    return form.toString();
  }
  return String(body.value);
}

/**
 * A curl line that sends the request again, without any credential: `$HOOKS_URL` for the intake's address, and
 * on a token path `$HOOKS_TOKEN` where the token goes. A signed path needs a signature made afresh: it says so.
 */
export function curlLine(detail: InspectorDetail): string {
  const lines: string[] = [];
  if (detail.signed) {
    lines.push(
      "# A signed path: this line carries no signature. Save the request as a fixture and send it with",
      "# `hooks replay <fixture> --send $HOOKS_URL`, which signs it afresh.",
    );
  }
  const parts = [
    `curl -X ${detail.method ?? "POST"} "$HOOKS_URL"${shellQuote(detail.url ?? `/${detail.hook}`)}`,
  ];
  if (!detail.signed) parts.push(`-H "Authorization: Bearer $HOOKS_TOKEN"`);
  for (const [name, value] of Object.entries(detail.headers ?? {})) {
    if (value === REDACTED || CURL_LEAVES.has(name.toLowerCase())) continue;
    parts.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  }
  if (detail.body?.kind === "base64")
    parts.push(`--data-binary @<(echo ${shellQuote(String(detail.body.value))} | base64 -d)`);
  else if (detail.body !== undefined) parts.push(`--data-binary ${shellQuote(bodyText(detail.body))}`);
  lines.push(parts.join(" \\\n  "));
  return `${lines.join("\n")}\n`;
}

export interface HeaderChange {
  name: string;
  a?: string;
  b?: string;
}

export interface Comparison {
  a: { id: string; requestId: string; at: number; hook: string; status: number };
  b: { id: string; requestId: string; at: number; hook: string; status: number };
  /** Headers that differ (absent on one side, or another value). */
  headers: HeaderChange[];
  /** The bodies as pretty text, line by line. */
  body: DiffPart[];
}

/** The readable text of a body, for a line diff: JSON pretty-printed, a form one field a line. */
function prettyBody(body: InspectorDetail["body"]): string {
  if (body === undefined) return "";
  if (body.kind === "json" || body.kind === "form") return JSON.stringify(body.value, null, 2);
  return String(body.value);
}

export function compareRequests(a: InspectorDetail, b: InspectorDetail): Comparison {
  const names = [...new Set([...Object.keys(a.headers ?? {}), ...Object.keys(b.headers ?? {})])].sort();
  const headers: HeaderChange[] = [];
  for (const name of names) {
    const left = a.headers?.[name];
    const right = b.headers?.[name];
    if (left === right) continue;
    const change: HeaderChange = { name };
    if (left !== undefined) change.a = left;
    if (right !== undefined) change.b = right;
    headers.push(change);
  }
  const side = (d: InspectorDetail) => ({
    id: d.id,
    requestId: d.requestId,
    at: d.at,
    hook: d.hook,
    status: d.status,
  });
  return { a: side(a), b: side(b), headers, body: diffLines(prettyBody(a.body), prettyBody(b.body)) };
}

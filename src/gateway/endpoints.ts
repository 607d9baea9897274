/** @module What the intake answers at, described for people: the ready banner of `serve` and the listing of `check`. */
import type { HooksStatus, MappingSummary, RateLimit } from "../index.js";

export interface EndpointRow {
  url: string;
  description: string;
}

export function describeMatch(mapping: MappingSummary): string {
  const parts: string[] = [];
  if (mapping.matchPath !== undefined) parts.push(`path=${mapping.matchPath}`);
  if (mapping.matchSource !== undefined) parts.push(`source=${mapping.matchSource}`);
  for (const header of mapping.matchHeaders ?? []) parts.push(`header ${header}`);
  for (const field of mapping.matchPayload ?? []) parts.push(`payload ${field}`);
  return parts.length > 0 ? parts.join(" ") : "any (catch-all)";
}

/** Template, transform or preset: where the mapping's action comes from. */
export function describeBuilder(mapping: MappingSummary): string {
  const builder = mapping.transform
    ? `transform ${mapping.transform.module}${mapping.transform.export ? `#${mapping.transform.export}` : ""}`
    : mapping.builder;
  return mapping.instructionsChars === undefined
    ? builder
    : `${builder} + instructions (${mapping.instructionsChars} chars)`;
}

/** A rate limit in a few words: `10 per 60 s, per client`. */
export function describeRateLimit(rule: RateLimit): string {
  return `${rule.requests} per ${rule.perSeconds} s, ${rule.per === "hook" ? "all senders together" : "per client"}`;
}

export function describeEndpoints(
  baseUrl: string,
  hooksPath: string,
  mappings: readonly MappingSummary[],
  rateLimits: HooksStatus["rateLimits"] = {},
): EndpointRow[] {
  const base = `${baseUrl}${hooksPath}`;
  const limited = (rule: RateLimit | undefined) => (rule ? ` (at most ${describeRateLimit(rule)})` : "");
  const rows: EndpointRow[] = [
    {
      url: `${base}/wake`,
      description: `wake: queue a system event for the main session${limited(rateLimits.wake)}`,
    },
    { url: `${base}/agent`, description: `agent: run an isolated agent turn${limited(rateLimits.agent)}` },
  ];
  for (const mapping of mappings) {
    const url = mapping.matchPath !== undefined ? `${base}/${mapping.matchPath}` : `${base}/<name>`;
    const match =
      (mapping.matchSource !== undefined ? `, source=${mapping.matchSource}` : "") +
      (mapping.matchHeaders ?? []).map((header) => `, ${header}`).join("") +
      (mapping.verify !== undefined ? `, signed: ${mapping.verify}` : "") +
      (mapping.rateLimit !== undefined ? `, at most ${describeRateLimit(mapping.rateLimit)}` : "");
    rows.push({
      url,
      description: `mapping ${mapping.id} (${mapping.action}, ${describeBuilder(mapping)}${match})`,
    });
  }
  return rows;
}

/** Rows as aligned text lines, indented by two spaces. */
export function formatRows(rows: readonly EndpointRow[]): string[] {
  const width = Math.max(...rows.map((row) => row.url.length));
  return rows.map((row) => `  ${row.url.padEnd(width)}  ${row.description}`);
}

/** Quotes a word for POSIX shells so a printed command can be pasted as is. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A curl command that wakes the main session; `token` is a literal or a shell expression such as `$HOOKS_TOKEN`. */
export function wakeCurlLine(
  baseUrl: string,
  hooksPath: string,
  token: { literal: string } | { shellVar: string },
): string {
  const auth =
    "literal" in token
      ? shellQuote(`Authorization: Bearer ${token.literal}`)
      : `"Authorization: Bearer $${token.shellVar}"`;
  return [
    "curl -sS -X POST",
    shellQuote(`${baseUrl}${hooksPath}/wake`),
    "-H",
    auth,
    "-H",
    shellQuote("Content-Type: application/json"),
    "-d",
    shellQuote(JSON.stringify({ text: "Hello from curl" })),
  ].join(" ");
}

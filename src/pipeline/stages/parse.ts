/** @module The parse stage: the body's bytes become a value (JSON, or a form's fields); a body that is its sender's handshake is answered with its challenge. */

import { HookError } from "../../errors.js";
import { challengeResponse } from "../handshake.js";
import { answer, type BodyKind, need, type Stage } from "../stage.js";

export const parse: Stage = (ctx) => {
  const raw = need(ctx.raw, "the body");
  const kind = need(ctx.bodyKind, "the content type");
  // Decoded already when the body is large (`decodeLarge`, a turn before).
  const text = ctx.text ?? raw.toString("utf8");
  // Signed bytes are read as their sender sends them, whatever the unsigned Content-Type says.
  if (ctx.verifier.signsBody) refuseRelabelledJson(kind, text);
  const body = parseBody(kind, raw, text);
  // Slack's check of a Request URL: a verified body that is its sender's handshake, not a delivery, is answered
  // with its challenge once its signature is, whatever the mappings would make of it.
  const challenge = ctx.verifier.bodyChallenge?.(body);
  if (challenge !== undefined) return answer(ctx, challengeResponse(challenge, ctx.requestId));
  return { ...ctx, text, body };
};

export type { BodyKind } from "../stage.js";

/** JSON for `application/json`, `+json` or no header; form for url-encoded; anything else is refused (415). */
export function classifyContentType(header: string | undefined): BodyKind {
  if (header === undefined || header.trim() === "") return "json";
  const semicolon = header.indexOf(";");
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/x-www-form-urlencoded") return "form";
  throw new HookError(
    "UNSUPPORTED_MEDIA_TYPE",
    `Content-Type ${type} is not accepted; send application/json or application/x-www-form-urlencoded.`,
  );
}

/** Parses a body (`text` is its bytes decoded as UTF-8, when the caller has them already); an empty body is `{}`. */
export function parseBody(kind: BodyKind, raw: Buffer, text = raw.toString("utf8")): unknown {
  if (raw.length === 0) return {};
  if (kind === "form") return parseForm(text);
  try {
    return JSON.parse(text);
  } catch (error) {
    // Whitespace only counts as empty; checked here so a normal body is not scanned twice.
    if (text.trim() === "") return {};
    // The parser's own message quotes the body; only the position goes back to the sender.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new HookError(
      "INVALID_JSON",
      `The body is not valid JSON${position ? ` (at position ${position})` : ""}.`,
    );
  }
}

/** Form fields as strings; a repeated key becomes an array of its values in order. */
export function parseForm(text: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  for (const [key, value] of new URLSearchParams(text)) {
    const existing = fields.get(key);
    if (existing === undefined) fields.set(key, value);
    else if (Array.isArray(existing)) existing.push(value);
    else fields.set(key, [existing, value]);
  }
  // fromEntries defines own properties, so a "__proto__" field cannot reach the prototype.
  return Object.fromEntries(fields);
}

/**
 * On a signed path the body must be what its label says. A signature covers the bytes, not the Content-Type: a signed
 * JSON body (a Stripe or Slack event) relabelled as a form would be read as other fields, the delivery id among them
 * lost, and accepted again. No sender signs JSON and calls it a form; a form body read as JSON is refused already.
 */
export function refuseRelabelledJson(kind: BodyKind, text: string): void {
  if (kind !== "form" || !/^\s*[{[]/.test(text)) return;
  try {
    JSON.parse(text);
  } catch {
    return;
  }
  throw new HookError(
    "INVALID_PAYLOAD",
    "The body is JSON but its Content-Type says application/x-www-form-urlencoded: a signed body is read as its sender sends it; send it as application/json.",
    { reason: "MEDIA_TYPE_MISMATCH" },
  );
}

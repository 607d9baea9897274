/** @module A recorded request as a fixture file, one shape for captures and journal fixtures: exact body bytes, a readable copy of a JSON body, no credentials, owner-only. */
import { chmodSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import JSON5 from "json5";
import { isCredentialHeader } from "../safety/credentials.js";
import type { FixtureInput } from "./fixture-schema.js";

/** A request as it was received (a capture) or stored (the journal), credentials already removed. */
export interface RecordedRequest {
  name: string;
  description?: string;
  method: string;
  /** The hook name: the fixture then replays under whatever `hooks.path` the config has. */
  hook: string;
  headers: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string>>;
  /** The exact bytes received. */
  rawBody: Buffer;
}

/** Headers that describe one transfer (or the answer's request id), not the request: a fixture leaves them out. */
export const TRANSFER_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "accept-encoding",
  "x-request-id",
]);

export function fixtureFromRequest(recorded: RecordedRequest): FixtureInput {
  // A record written before a header was known for a credential may still hold it: a fixture never does.
  const headers = Object.fromEntries(
    Object.entries(recorded.headers).filter(
      ([name]) => !TRANSFER_HEADERS.has(name.toLowerCase()) && !isCredentialHeader(name),
    ),
  );
  return {
    name: recorded.name,
    ...(recorded.description === undefined ? {} : { description: recorded.description }),
    request: {
      method: recorded.method,
      path: recorded.hook,
      headers,
      ...(Object.keys(recorded.query).length > 0 ? { query: { ...recorded.query } } : {}),
      ...bodyFields(recorded.rawBody),
    },
  };
}

/**
 * The exact bytes, so a replay sends (and re-signs) what the sender sent: as text when they are UTF-8 that
 * round-trips, else base64. A JSON body also gets a pretty copy for people, `bodyJson`, placed before the exact
 * text (often one long line); loading a fixture checks that the copy still matches.
 */
function bodyFields(raw: Buffer): Pick<FixtureInput["request"], "rawBody" | "rawBodyBase64" | "bodyJson"> {
  const text = raw.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(raw)) return { rawBodyBase64: raw.toString("base64") };
  const readable = readableJson(text);
  return readable === undefined ? { rawBody: text } : { bodyJson: readable, rawBody: text };
}

/** The body's JSON when it is an object or an array that a JSON5 file holds unchanged; else undefined. */
function readableJson(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object") return undefined;
  // A lone surrogate in a string, say, would not survive the file: the copy is left out rather than wrong.
  return isDeepStrictEqual(JSON5.parse(JSON5.stringify(parsed)), parsed) ? parsed : undefined;
}

/**
 * Writes the fixture, owner-only (it holds a payload, like the journal it may come from), also over an existing
 * file. JSON5 with the comment lines on top, the format people edit; plain JSON for a `.json` file name.
 */
export function writeFixtureFile(file: string, fixture: FixtureInput, comment: readonly string[]): void {
  const text = file.endsWith(".json")
    ? `${JSON.stringify(fixture, null, 2)}\n`
    : `${fixtureComment(fixture, comment)}${JSON5.stringify(fixture, { space: 2, quote: '"' })}\n`;
  writeFileSync(file, text, { mode: 0o600 });
  // The mode above applies only to a file this call created.
  chmodSync(file, 0o600);
}

function fixtureComment(fixture: FixtureInput, comment: readonly string[]): string {
  const lines = [...comment];
  if (fixture.request.bodyJson !== undefined) {
    lines.push(
      "request.rawBody is the exact body: what replay sends and signs. request.bodyJson is a readable copy;",
      "to send a changed body, edit rawBody, or rename bodyJson to body and delete rawBody.",
    );
  }
  return lines.map((line) => `// ${line}\n`).join("");
}

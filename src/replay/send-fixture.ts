/** @module `--send`: posts a fixture's request to a running gateway and says what the gateway did with it. */
import { isPlainObject } from "../config/plain-object.js";
import type { FixtureRequest } from "./replay-fixture.js";

/** The gateway's answer to a sent fixture. */
export interface SentFixture {
  status: number;
  requestId: string | null;
  /** The gateway had accepted this delivery id before: it answered with its first answer and did nothing. */
  duplicate: boolean;
  body: unknown;
}

/** Posts the fixture's request, signed like replay signs it, to a running gateway. */
export async function sendFixture(request: FixtureRequest, baseUrl: string): Promise<SentFixture> {
  const { "content-length": _length, ...headers } = request.headers;
  const response = await fetch(new URL(request.url, baseUrl), {
    method: request.method,
    headers,
    ...(request.rawBody.length === 0 && request.method === "GET" ? {} : { body: request.rawBody }),
  });
  const text = await response.text();
  return {
    status: response.status,
    requestId: response.headers.get("x-request-id"),
    duplicate: response.headers.get("idempotent-replay") === "true",
    body: text ? safeParse(text) : null,
  };
}

/** The ids an answer names (wake, agent and mapped answers), in the order a person reads them. */
const ID_FIELDS = ["mappingId", "eventId", "runId", "sessionKey"] as const;
/** A fixed response's body (TwiML, a Slack message) is shown up to this many characters. */
const MAX_SHOWN_CHARS = 200;

/**
 * One line saying what the gateway did: `200 accepted: mappingId=… eventId=…`; `200 duplicate: nothing done (…)`
 * when it had accepted the delivery id before; `401 refused UNAUTHORIZED: …`. A duplicate's answer is the first
 * request's, so its ids name what that one did, not anything new.
 */
export function describeSent(sent: SentFixture): string {
  const { status, body } = sent;
  const fields = isPlainObject(body) ? body : undefined;
  if (sent.duplicate) {
    const ids = fields ? namedIds(fields) : "";
    const first = ids === "" ? "" : `; its first answer: ${ids}`;
    return `${status} duplicate: nothing done (the gateway had already accepted this delivery id${first})`;
  }
  if (status >= 400) {
    const code = typeof fields?.code === "string" ? ` ${fields.code}` : "";
    const reason = typeof fields?.error === "string" ? `: ${fields.error}` : shown(body);
    return `${status} refused${code}${reason}`;
  }
  if (status === 204) return `${status} accepted: nothing to do`;
  if (!fields) return `${status} accepted${shown(body)}`;
  const said = [namedIds(fields)];
  // A caller that waited for its turn gets the turn's outcome beside the ids.
  if (typeof fields.status === "string" && typeof fields.reply === "string")
    said.push(`turn=${fields.status} reply=${fields.reply}`);
  const text = said.filter((part) => part !== "").join(" ");
  return `${status} accepted${text === "" ? "" : `: ${text}`}`;
}

function namedIds(fields: Record<string, unknown>): string {
  const named = ID_FIELDS.flatMap((name) =>
    typeof fields[name] === "string" ? [`${name}=${fields[name]}`] : [],
  );
  if (Array.isArray(fields.runIds) && fields.runIds.length > 1) named.push(`runs=${fields.runIds.length}`);
  return named.join(" ");
}

function shown(body: unknown): string {
  if (body === null || body === "") return "";
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return ` ${text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text}`;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

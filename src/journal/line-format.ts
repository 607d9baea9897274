/**
 * @module The journal's line format 3 on disk: short keys, the wrapped text left out (rebuilt from the raw text),
 * what a line can derive left out; read back into the lines' full shape, so nothing but this file knows the format.
 */
import { randomUUID } from "node:crypto";
import { rewrap, type Wrapping, wrappingOf } from "../safety/wrap-external.js";
import { jsonStringPieces } from "./json-bytes.js";

/** The kinds of line format 3 writes (format 2 spelled them out; other kinds are written as before). */
const KIND = { admitted: "a", handed: "h", done: "d" } as const;
const KIND_BACK: Record<string, string> = { a: "admitted", h: "handed", d: "done" };

/**
 * A line's own keys, long → short. The encoders spell them in object literals (one shape, no lookups per request);
 * these tables read them back, and the round-trip tests keep the two in step.
 */
const LINE_KEYS = {
  requestId: "rq",
  hook: "h",
  mappingId: "mp",
  delivery: "dl",
  runs: "ru",
  replayOf: "ro",
  handed: "hd",
  handedRuns: "hr",
  recovered: "rc",
  outcomes: "o",
} as const;
/** An event's payload keys, long → short; keys not listed are kept as they are. */
const PAYLOAD_KEYS = {
  sessionKey: "k",
  agentId: "a",
  raw: "r",
  untrusted: "u",
  eventId: "i",
  runId: "n",
  text: "x",
  message: "g",
  source: "s",
  reason: "why",
} as const;
/** The stored request's keys, long → short. */
const REQUEST_KEYS = {
  method: "m",
  url: "u",
  headers: "h",
  body: "b",
  bodyBase64: "b64",
  bodyAroundRaw: "ba",
} as const;
const EVENTS = {
  "session:system-event": "se",
  "session:agent-turn": "at",
  "heartbeat:request": "hb",
  "delivery:send": "ds",
  "session:agent-turn-finished": "tf",
  "hooks:request": "hr",
} as const;

type Json = Record<string, unknown>;
const invert = (table: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(table).map(([long, short]) => [short, long]));
const LINE_BACK = invert(LINE_KEYS);
const PAYLOAD_BACK = invert(PAYLOAD_KEYS);
const REQUEST_BACK = invert(REQUEST_KEYS);
const EVENTS_BACK = invert(EVENTS);

/** The admitted record as it is handed to the journal (the full line's shape without its kind). */
export interface AdmittedFields {
  id: string;
  requestId?: string | undefined;
  at: number;
  hook: string;
  mappingId?: string | undefined;
  response: { status: number; contentType?: string | undefined; body?: string | undefined };
  delivery?: string | undefined;
  events: readonly { event: string; payload: unknown }[];
  runs?: readonly unknown[] | undefined;
  request?: object | undefined;
  replayOf?: string | undefined;
  handed?: boolean | undefined;
  handedRuns?: readonly string[] | undefined;
}

/**
 * An admitted line of format 3. Left out: the wrapped text of an event whose `raw` it wraps (its marker id and source
 * instead), an event's `source` when it is the line's own request, the answer's body and type unless a duplicate
 * delivery will need them again (the status stays), an empty list of runs.
 */
export function encodeAdmitted(record: AdmittedFields, bodySentinel?: string): string {
  const own = ownSource(record);
  const { response, delivery, runs, request } = record;
  // One literal, every key in this order: JSON.stringify leaves the undefined ones out.
  return JSON.stringify({
    t: KIND.admitted,
    id: record.id,
    rq: record.requestId,
    at: record.at,
    h: record.hook,
    mp: record.mappingId,
    s: response.status,
    r: delivery === undefined ? undefined : response,
    dl: delivery,
    e: record.events.map((planned) => encodeEvent(planned.event, planned.payload as Json, own)),
    ru: runs === undefined || runs.length === 0 ? undefined : runs,
    q: request === undefined ? undefined : storedRequest(request as StoredRequestFields, bodySentinel),
    ro: record.replayOf,
    hd: record.handed,
    hr: record.handedRuns,
  });
}

/** A line given in pieces: text (written as UTF-8) and bytes written as they are. */
export type LinePieces = readonly (string | Buffer)[];

/**
 * The admitted line, the same bytes as `encodeAdmitted`'s, in pieces when the stored request carries its large
 * body's bytes (`bodyBytes`): those go in as they are, between the text before and after them. Escaping 30 MB as
 * text and encoding it again held the event loop half a second (bench/PROFILE.md, "Hostile load").
 */
export function encodeAdmittedLine(record: AdmittedFields): string | LinePieces {
  const bytes = (record.request as StoredRequestFields | undefined)?.bodyBytes;
  const pieces = bytes === undefined ? undefined : jsonStringPieces(bytes);
  if (pieces === undefined) return encodeAdmitted(record);
  // Unguessable, so no sender's text can hold it: the line is cut where it stands.
  const sentinel = `\u0000${randomUUID()}`;
  const line = encodeAdmitted(record, sentinel);
  const marker = JSON.stringify(sentinel);
  const at = line.indexOf(marker);
  // No text body took the sentinel's place (a request stored as base64): the line as it is.
  if (at === -1) return encodeAdmitted(record);
  return [line.slice(0, at), ...pieces, line.slice(at + marker.length)];
}

/** A `handed` line of format 3. */
export function encodeHanded(id: string, at: number, runs?: readonly string[]): string {
  return JSON.stringify(
    runs === undefined ? { t: KIND.handed, id, at } : { t: KIND.handed, id, at, ru: runs },
  );
}

/** A `done` line of format 3, written for every admitted request: built as text, without an object to stringify. */
export function encodeDone(
  id: string,
  at: number,
  runs?: readonly unknown[],
  recovered?: boolean,
  outcomes?: Readonly<Record<string, string>>,
): string {
  const extra =
    (runs !== undefined && runs.length > 0 ? `,"ru":${JSON.stringify(runs)}` : "") +
    (recovered ? `,"rc":true` : "") +
    (outcomes !== undefined ? `,"o":${JSON.stringify(outcomes)}` : "");
  return `{"t":"d","id":${JSON.stringify(id)},"at":${at}${extra}}`;
}

/** Turns a parsed line of format 3 into the full shape (in place where it can); other lines pass unchanged. */
export function expandFormat3(json: unknown): unknown {
  const line = json as Json | null;
  const kind = typeof line?.t === "string" ? KIND_BACK[line.t] : undefined;
  if (line === null || kind === undefined) return json;
  const full: Json = { t: kind };
  for (const [key, value] of Object.entries(line)) {
    if (key !== "t" && key !== "s" && key !== "r" && key !== "e" && key !== "q")
      full[LINE_BACK[key] ?? key] = value;
  }
  if (kind !== "admitted") return full;
  full.response = line.r ?? { status: line.s };
  full.runs ??= [];
  const own = ownSource(full as unknown as AdmittedFields);
  full.events = Array.isArray(line.e) ? line.e.map((planned: Json) => decodeEvent(planned, own)) : [];
  if (line.q !== null && typeof line.q === "object") full.request = renameKeys(line.q as Json, REQUEST_BACK);
  return full;
}

/** The source an event of this request has unless it says otherwise. */
function ownSource(record: Pick<AdmittedFields, "hook" | "mappingId" | "requestId" | "id">): Json {
  return record.mappingId === undefined
    ? { hook: record.hook, requestId: record.requestId ?? record.id }
    : { hook: record.hook, mappingId: record.mappingId, requestId: record.requestId ?? record.id };
}

/** The field of an event that holds its `raw` text, wrapped (or after the operator's instructions). */
const WRAPPED_FIELD: Record<string, string> = {
  "session:system-event": "text",
  "session:agent-turn": "message",
};

function encodeEvent(event: string, payload: Json, own: Json): Json {
  const field = WRAPPED_FIELD[event];
  const raw = payload.raw;
  const text = field === undefined ? undefined : payload[field];
  let wrapped: string[] | undefined;
  let before: string | undefined;
  if (typeof raw === "string" && typeof text === "string") {
    const wrapping = payload.untrusted === true ? wrappingOf(text, raw) : undefined;
    if (wrapping !== undefined) {
      wrapped =
        wrapping.before === ""
          ? [wrapping.markerId, wrapping.source]
          : [wrapping.markerId, wrapping.source, wrapping.before];
    } else if (text.endsWith(raw)) {
      // Raw content (the mapping allowed it): the raw text, after the operator's instructions if any.
      before = text.slice(0, text.length - raw.length);
    }
  }
  const skip = wrapped !== undefined || before !== undefined ? field : undefined;
  const dropSource = sameSource(payload.source, own);
  // Built key by key, never deleted from: a `delete` turns an object into a slow dictionary, and stringifying those
  // cost more than the line saved (bench/PROFILE.md, "Journal line format 3").
  const out: Json = {};
  for (const key in payload) {
    if (key === skip || (dropSource && key === "source")) continue;
    const value = payload[key];
    if (value !== undefined) out[PAYLOAD_KEYS[key as keyof typeof PAYLOAD_KEYS] ?? key] = value;
  }
  if (wrapped !== undefined) out.w = wrapped;
  if (before !== undefined) out.wp = before;
  return { n: EVENTS[event as keyof typeof EVENTS] ?? event, p: out };
}

function decodeEvent(planned: Json, own: Json): Json {
  const name = String(planned.n);
  const event = EVENTS_BACK[name] ?? name;
  const payload = renameKeys((planned.p ?? {}) as Json, PAYLOAD_BACK);
  payload.source ??= own;
  const field = WRAPPED_FIELD[event];
  const raw = payload.raw;
  if (field !== undefined && typeof raw === "string") {
    if (Array.isArray(payload.w)) {
      const [markerId, source, before] = payload.w as [string, Wrapping["source"], string?];
      payload[field] = rewrap(raw, { markerId, source, before: before ?? "" });
    } else if (typeof payload.wp === "string") payload[field] = payload.wp + raw;
  }
  delete payload.w;
  delete payload.wp;
  return { event, payload };
}

function sameSource(source: unknown, own: Json): boolean {
  const given = source as Json | undefined;
  return (
    given !== undefined &&
    given.hook === own.hook &&
    given.mappingId === own.mappingId &&
    given.requestId === own.requestId &&
    Object.keys(given).length === Object.keys(own).length
  );
}

/**
 * Headers of the connection, not of the request: a replay sends its own. Left out of the stored request, they were
 * a tenth of a finished wake's line.
 */
const TRANSPORT_HEADERS = new Set(["connection", "keep-alive", "content-length"]);

interface StoredRequestFields {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  bodyBase64?: string;
  bodyAroundRaw?: unknown;
  /** The UTF-8 bytes of `body`, or of `bodyAroundRaw`'s second part, when the body is large (never written itself). */
  bodyBytes?: Buffer | undefined;
}

/** The stored request's keys; with a sentinel, the part its `bodyBytes` hold is written as the sentinel, to cut at. */
function storedRequest(request: StoredRequestFields, bodySentinel?: string): Json {
  const { headers } = request;
  const sentinel = request.bodyBytes === undefined ? undefined : bodySentinel;
  const around = Array.isArray(request.bodyAroundRaw) ? request.bodyAroundRaw : undefined;
  let kept = headers;
  for (const name of TRANSPORT_HEADERS) {
    if (!(name in headers)) continue;
    // Copied only when one is there: most senders' headers are kept as they are.
    kept = {};
    for (const key in headers) if (!TRANSPORT_HEADERS.has(key)) kept[key] = headers[key]!;
    break;
  }
  return {
    m: request.method,
    u: request.url,
    h: kept,
    b: sentinel !== undefined && request.body !== undefined ? sentinel : request.body,
    b64: request.bodyBase64,
    ba:
      sentinel !== undefined && around !== undefined
        ? [around[0], sentinel, around[2]]
        : request.bodyAroundRaw,
  };
}

/** A copy with the keys of `table` renamed; other keys kept. */
function renameKeys(object: Json, table: Record<string, string>): Json {
  const out: Json = {};
  for (const key in object) {
    const value = object[key];
    if (value !== undefined) out[table[key] ?? key] = value;
  }
  return out;
}

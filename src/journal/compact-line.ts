/** @module A large payload is kept once per journal line: an event's wrapped text and the stored body refer to the event's `raw` instead of repeating it. */

/** Below this many characters a repeat costs less than looking for it. */
const MIN_RAW_CHARS = 64 * 1024;
/** Event fields that carry the event's `raw` inside the safety wrapper. */
const WRAPPING_FIELDS = ["text", "message"] as const;
const AROUND = "AroundRaw";

interface PlannedEvent {
  event: string;
  payload: unknown;
}

type Payload = Record<string, unknown> & { raw?: unknown };

/** Characters JSON.stringify escapes inside a string; without any, a string is its own JSON form. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `raw` as it appears inside a JSON string (what a sender's JSON body holds); most large texts need no copy. */
const jsonEscaped = (raw: string) => (NEEDS_ESCAPE.test(raw) ? JSON.stringify(raw).slice(1, -1) : raw);

function largeRaw(payload: unknown): string | undefined {
  const raw = (payload as Payload | null)?.raw;
  return typeof raw === "string" && raw.length >= MIN_RAW_CHARS ? raw : undefined;
}

/**
 * The events as the journal line keeps them: a field holding the event's large `raw` becomes `<field>AroundRaw:
 * [before, after]`. New objects: the planned events themselves are emitted later and stay whole.
 */
export function compactEvents<E extends PlannedEvent>(events: readonly E[]): E[] {
  return events.map((planned) => {
    const raw = largeRaw(planned.payload);
    if (raw === undefined) return planned;
    const payload: Payload = { ...(planned.payload as Payload) };
    for (const field of WRAPPING_FIELDS) {
      const value = payload[field];
      if (typeof value !== "string") continue;
      const at = value.indexOf(raw);
      if (at === -1) continue; // neutralised markers inside: the text differs from raw and is kept whole
      payload[`${field}${AROUND}`] = [value.slice(0, at), value.slice(at + raw.length)];
      delete payload[field];
    }
    return { ...planned, payload };
  });
}

/**
 * The stored body as the line keeps it: `{ bodyAroundRaw: [before, after, event] }` when the body holds an event's
 * large `raw` as a JSON string (a wake's `text`, an agent's `message`), else the body itself.
 */
export function compactBody(
  body: string,
  events: readonly PlannedEvent[],
): { body: string } | { bodyAroundRaw: [string, string, number] } {
  for (const [index, planned] of events.entries()) {
    const raw = largeRaw(planned.payload);
    if (raw === undefined) continue;
    const escaped = jsonEscaped(raw);
    const at = body.indexOf(escaped);
    if (at !== -1) return { bodyAroundRaw: [body.slice(0, at), body.slice(at + escaped.length), index] };
  }
  return { body };
}

/** Puts back, in a parsed line, what `compactEvents` and `compactBody` left out; other lines pass unchanged. */
export function expandLine(line: unknown): void {
  const events = (line as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return;
  for (const planned of events as PlannedEvent[]) {
    const payload = planned?.payload as Payload | undefined;
    if (typeof payload?.raw !== "string") continue;
    for (const field of WRAPPING_FIELDS) {
      const around = payload[`${field}${AROUND}`];
      if (!isPair(around)) continue;
      payload[field] = around[0] + payload.raw + around[1];
      delete payload[`${field}${AROUND}`];
    }
  }
  const request = (line as { request?: Record<string, unknown> }).request;
  const around = request?.bodyAroundRaw;
  if (request && isPair(around) && typeof around[2] === "number") {
    const raw = (events[around[2]] as PlannedEvent | undefined)?.payload as Payload | undefined;
    if (typeof raw?.raw === "string") request.body = around[0] + jsonEscaped(raw.raw) + around[1];
    delete request.bodyAroundRaw;
  }
}

function isPair(value: unknown): value is [string, string, ...unknown[]] {
  return Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string";
}

/** From this many bytes of body on, the line takes the stored body's bytes as they are (`jsonStringPieces`). */
export const BODY_BYTES_FROM = 1024 * 1024;

/**
 * The bytes of the stored body's last part as `compactBody` kept it: all of `body`, or what follows the event's raw
 * text in `bodyAroundRaw`. `raw` is valid UTF-8 and `text` its decoding. Undefined for a smaller body, or when the cut
 * falls inside a surrogate pair (its bytes cannot be split there).
 */
export function bodyBytes(
  raw: Buffer,
  text: string,
  kept: ReturnType<typeof compactBody>,
): Buffer | undefined {
  if (raw.length < BODY_BYTES_FROM) return undefined;
  if ("body" in kept) return raw;
  const cut = text.length - kept.bodyAroundRaw[1].length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) return undefined;
  return raw.subarray(Buffer.byteLength(text.slice(0, cut)));
}

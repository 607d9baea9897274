/** @module How `hooks journal` prints requests: one line each for a listing, ids and outcomes for one request; never payload text. */
import type { PlannedEvent } from "../events.js";
import type { JournalEntry } from "../journal/read-journal.js";
import { isCredentialHeader, REDACTED, redactCredentials } from "../safety/credentials.js";

/** A sender's text as a terminal shows it harmlessly: control characters (an escape sequence) as `?`. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

function time(at: number): string {
  return new Date(at)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/**
 * `2026-11-23 08:01:02Z  202  done         agent  <request id>  mapping=…`; a refusal adds its reason (when finer than
 * its code) and its client address.
 */
export function formatJournalLine(entry: JournalEntry): string {
  const what = entry.code ? `${entry.state} ${entry.code}` : entry.state;
  const mapping = entry.mappingId === undefined ? "" : `  mapping=${entry.mappingId}`;
  const reason = entry.reason === undefined || entry.reason === entry.code ? "" : `  reason=${entry.reason}`;
  const client = entry.client === undefined || entry.state !== "refused" ? "" : `  client=${entry.client}`;
  const suppressed = entry.suppressed === undefined ? "" : `  suppressed=${entry.suppressed}`;
  return `${time(entry.at)}  ${entry.status}  ${what.padEnd(12)} ${entry.hook.padEnd(16)} ${entry.requestId}${mapping}${reason}${client}${suppressed}`;
}

/** The ids and routing of an event, never its text: payload content stays in the journal file. */
function describeEvent(planned: PlannedEvent): string {
  switch (planned.event) {
    case "session:system-event":
      return `eventId=${planned.payload.eventId} session=${planned.payload.sessionKey} (${planned.payload.text.length} chars)`;
    case "session:agent-turn":
      return `runId=${planned.payload.runId} session=${planned.payload.sessionKey} name=${JSON.stringify(planned.payload.name)}`;
    case "heartbeat:request":
      return `reason=${planned.payload.reason}`;
    default:
      return "";
  }
}

/** The request's journal entry as a person reads it: identity, answer, outcome, events, what was stored. */
export function formatJournalEntry(entry: JournalEntry): string {
  const lines = [
    `request   ${entry.requestId}`,
    `at        ${time(entry.at)}`,
    `hook      ${entry.hook}${entry.mappingId === undefined ? "" : ` (mapping ${entry.mappingId})`}`,
    `status    ${entry.status}${entry.code ? ` ${entry.code}` : ""}${admittedAs(entry)}`,
  ];
  const outcome =
    entry.doneAt === undefined
      ? entry.state
      : `${entry.state} at ${time(entry.doneAt)}${entry.recovered ? " (finished after a restart)" : ""}`;
  lines.push(`state     ${outcome}`);
  lines.push(...refusal(entry));
  if (entry.handedAt !== undefined)
    lines.push(`handed    ${time(entry.handedAt)} (agent turns went to the host)`);
  const outcomes = entry.outcomes ?? {};
  for (const run of entry.runs ?? []) {
    const delivery = outcomes[`${run.runId}:delivery`];
    lines.push(
      `turn      ${run.runId}: ${run.status}${run.reply ? ` (reply: ${run.reply})` : ""}${delivery ? `, delivery ${delivery}` : ""}`,
    );
  }
  const record = entry.record;
  if (record && record.events.length > 0) {
    lines.push("events");
    for (const planned of record.events) {
      const told = "eventId" in planned.payload ? outcomes[planned.payload.eventId] : undefined;
      lines.push(
        `  ${planned.event.padEnd(22)} ${describeEvent(planned)}${told ? ` → ${told}` : ""}`.trimEnd(),
      );
    }
  } else if (entry.planned !== undefined && entry.planned.length > 0) {
    // A compacted record: names and ids are what is left of its plan.
    lines.push("events");
    for (const planned of entry.planned) {
      const told = outcomes[planned.id];
      lines.push(`  ${planned.event.padEnd(22)} ${planned.id}${told ? ` → ${told}` : ""}`);
    }
  }
  if (record) {
    const request = record.request;
    if (request) {
      const bytes = bodyBytes(request);
      lines.push(
        "stored request",
        `  ${request.method} ${request.url}`,
        `  headers: ${Object.keys(request.headers)
          .sort()
          .map((name) => (isCredentialHeader(name) ? `${name} ${REDACTED}` : name))
          .join(", ")}`,
        `  body: ${bytes} bytes (hooks journal replay ${entry.requestId} --fixture <file> writes it out)`,
      );
    } else {
      lines.push("stored request: none (hooks.journal.storePayloads is false)");
    }
  }
  return `${lines.join("\n")}\n`;
}

/** A request answered without admission: why, the message the sender got, who sent it, and how. */
function refusal(entry: JournalEntry): string[] {
  const lines: string[] = [];
  if (entry.reason !== undefined)
    lines.push(`reason    ${entry.reason}${entry.error ? `: ${entry.error}` : ""}`);
  if (entry.client !== undefined) lines.push(`client    ${entry.client}`);
  if (entry.suppressed !== undefined)
    lines.push(
      entry.state === "duplicate"
        ? `suppressed ${entry.suppressed} more copies of this delivery left out before this one`
        : `suppressed ${entry.suppressed} refused requests from this address left out before this one`,
    );
  if (entry.method !== undefined && entry.url !== undefined)
    lines.push(`sent      ${entry.method} ${entry.url}`);
  if (entry.headers !== undefined) {
    lines.push("headers");
    for (const [name, value] of Object.entries(entry.headers))
      lines.push(`  ${name}: ${isCredentialHeader(name) ? REDACTED : printable(value)}`);
  }
  return lines;
}

/** When the caller waited for its turn, the status it got differs from the admission's: both are told. */
function admittedAs(entry: JournalEntry): string {
  const admitted = entry.record?.response.status;
  return admitted === undefined || admitted === entry.status
    ? ""
    : ` (admitted with ${admitted}; the caller waited for its agent turn's outcome)`;
}

/** The entry for `--json`: the same facts, with sizes in place of the payload's text and body. */
export function journalEntryToJson(entry: JournalEntry): Record<string, unknown> {
  const { record, ...rest } = entry;
  if (!record) return rest;
  const request = record.request;
  return {
    ...rest,
    events: record.events.map((planned) => ({ event: planned.event, ...eventIds(planned) })),
    request: request && {
      method: request.method,
      url: request.url,
      // A record written before a header was known for a credential may still hold its value.
      headers: redactCredentials(request.headers),
      bodyBytes: bodyBytes(request),
    },
  };
}

function bodyBytes(request: { body?: string | undefined; bodyBase64?: string | undefined }): number {
  return request.bodyBase64 !== undefined
    ? Buffer.from(request.bodyBase64, "base64").length
    : Buffer.byteLength(request.body ?? "");
}

function eventIds(planned: PlannedEvent): Record<string, unknown> {
  switch (planned.event) {
    case "session:system-event":
      return { eventId: planned.payload.eventId, sessionKey: planned.payload.sessionKey };
    case "session:agent-turn":
      return {
        runId: planned.payload.runId,
        sessionKey: planned.payload.sessionKey,
        name: planned.payload.name,
      };
    case "heartbeat:request":
      return { reason: planned.payload.reason };
    default:
      return {};
  }
}

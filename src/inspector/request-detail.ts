/** @module One journal entry as the inspector's detail: the stored request redacted, the verification, the planned events and what became of them. */
import type { PlannedEvent } from "../events.js";
import type { JournalEntry } from "../journal/read-journal.js";
import type { InspectorDetail, InspectorSummary } from "./inspector-source.js";
import { shownBody, shownHeaders, shownUrl } from "./redact.js";

/** Fields a journal entry carries when the journal keeps them (refusals' details, outcomes): read when present. */
interface KeptFields {
  reason?: string;
  error?: string;
  client?: string;
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  outcomes?: Record<string, string>;
  planned?: { event: string; id: string }[];
}

/** A run's outcome, with the reply kind when the journal kept it. */
type KeptRun = { runId: string; status: string; reply?: string };

export function summaryOf(entry: JournalEntry): InspectorSummary {
  const kept = entry as JournalEntry & KeptFields;
  const row: InspectorSummary = {
    id: entry.id,
    requestId: entry.requestId,
    at: entry.at,
    hook: entry.hook,
    status: entry.status,
    state: entry.state,
  };
  if (entry.mappingId !== undefined) row.mappingId = entry.mappingId;
  if (entry.code !== undefined) row.code = entry.code;
  if (typeof kept.reason === "string") row.reason = kept.reason;
  if (typeof kept.client === "string") row.client = kept.client;
  if (entry.replayOf !== undefined) row.replayOf = entry.replayOf;
  return row;
}

/** The id a planned event is known by: a system event's id, an agent turn's (or its delivery's) run id. */
function eventIdOf(planned: PlannedEvent): string {
  const payload = planned.payload as { eventId?: string; runId?: string };
  return payload.eventId ?? payload.runId ?? "";
}

/** `signed`: the hook is reached by a signature rather than the token. */
export function detailOf(entry: JournalEntry, signed: boolean, durationMs?: number): InspectorDetail {
  const kept = entry as JournalEntry & KeptFields;
  const detail: InspectorDetail = { ...summaryOf(entry), signed };
  if (durationMs !== undefined) detail.durationMs = durationMs;
  const stored = entry.record?.request;
  const method = stored?.method ?? kept.method;
  if (method !== undefined) detail.method = method;
  const url = stored?.url ?? kept.url;
  if (url !== undefined) Object.assign(detail, shownUrl(url));
  const headers = stored?.headers ?? kept.headers;
  if (headers !== undefined) detail.headers = shownHeaders(headers);
  if (stored !== undefined) {
    const body = shownBody(headers?.["content-type"], stored.body, stored.bodyBase64);
    if (body !== undefined) detail.body = body;
  }
  if (typeof kept.error === "string") detail.error = kept.error;
  detail.verification = verificationOf(entry, kept, signed);
  const outcomes = kept.outcomes ?? {};
  const planned =
    entry.record && entry.record.events.length > 0
      ? entry.record.events.map((event) => ({ event: event.event, id: eventIdOf(event as PlannedEvent) }))
      : (kept.planned ?? []);
  if (planned.length > 0) {
    detail.events = planned.map(({ event, id }) =>
      outcomes[id] === undefined ? { event, id } : { event, id, outcome: outcomes[id] },
    );
  }
  const runs = entry.runs as KeptRun[] | undefined;
  if (runs !== undefined) {
    detail.runs = runs.map((run) =>
      run.reply === undefined
        ? { runId: run.runId, status: run.status }
        : { runId: run.runId, status: run.status, reply: run.reply },
    );
  }
  if (entry.record !== undefined && stored === undefined) {
    detail.note =
      "The body and headers were not kept (hooks.journal.storePayloads is false): nothing to show, replay or save.";
  } else if (entry.state === "refused" && headers === undefined) {
    detail.note = "Refused requests are listed with their reason; their bodies are never kept.";
  }
  return detail;
}

function verificationOf(entry: JournalEntry, kept: KeptFields, signed: boolean): string {
  if (entry.state === "refused") {
    const code = kept.reason ?? entry.code ?? "refused";
    return kept.error === undefined ? code : `${code}: ${kept.error}`;
  }
  const accepted = signed ? "signature verified" : "token accepted";
  if (entry.state === "duplicate")
    return `${accepted}; a duplicate delivery: answered with the first answer, nothing done`;
  return accepted;
}

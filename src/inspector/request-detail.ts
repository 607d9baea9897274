/** @module One journal entry as the inspector's detail: the stored request redacted, the verification, the planned events and what became of them. */
import type { JournalEntry } from "../journal/read-journal.js";
import type { InspectorDetail, InspectorSummary } from "./inspector-source.js";
import { deliveryOf, outcomeText } from "./outcome-text.js";
import { shownBody, shownHeaders, shownUrl } from "./redact.js";
import { explainReason } from "./refusal-reasons.js";

export function summaryOf(entry: JournalEntry): InspectorSummary {
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
  if (entry.reason !== undefined) row.reason = entry.reason;
  if (entry.client !== undefined) row.client = entry.client;
  if (entry.replayOf !== undefined) row.replayOf = entry.replayOf;
  const outcome = outcomeText(entry.outcomes, entry.runs);
  if (outcome !== undefined) row.outcome = outcome;
  return row;
}

/** How the hook's requests are verified: by the token, or by a signature of this scheme (`github`, `slack`, …). */
export interface VerifiedBy {
  scheme: string | undefined;
}

export function detailOf(entry: JournalEntry, verifiedBy: VerifiedBy, durationMs?: number): InspectorDetail {
  const signed = verifiedBy.scheme !== undefined;
  const detail: InspectorDetail = { ...summaryOf(entry), signed };
  if (durationMs !== undefined) detail.durationMs = durationMs;
  const stored = entry.record?.request;
  const method = stored?.method ?? entry.method;
  if (method !== undefined) detail.method = method;
  const url = stored?.url ?? entry.url;
  if (url !== undefined) Object.assign(detail, shownUrl(url));
  const headers = stored?.headers ?? entry.headers;
  if (headers !== undefined) detail.headers = shownHeaders(headers);
  if (stored !== undefined) {
    const body = shownBody(headers?.["content-type"], stored.body, stored.bodyBase64);
    if (body !== undefined) detail.body = body;
  }
  if (entry.error !== undefined) detail.error = entry.error;
  detail.verification = verificationOf(entry, verifiedBy);
  if (entry.state === "refused") {
    const explanation = explainReason(entry.reason ?? entry.code);
    if (explanation !== undefined) detail.explanation = explanation;
  }
  if (entry.suppressed !== undefined && entry.suppressed > 0) detail.suppressed = entry.suppressed;
  const outcomes = entry.outcomes ?? {};
  const planned = entry.planned ?? [];
  if (planned.length > 0) {
    detail.events = planned.map(({ event, id, agentId }) => {
      const shown: NonNullable<InspectorDetail["events"]>[number] = { event, id };
      if (agentId !== undefined) shown.agentId = agentId;
      if (outcomes[id] !== undefined) shown.outcome = outcomes[id];
      return shown;
    });
  }
  const runs: NonNullable<InspectorDetail["runs"]> = (entry.runs ?? []).map((run) => {
    const shown: NonNullable<InspectorDetail["runs"]>[number] = { runId: run.runId, status: run.status };
    if (run.reply !== undefined) shown.reply = run.reply;
    const delivery = deliveryOf(outcomes, run.runId);
    if (delivery !== undefined) shown.delivery = delivery;
    return shown;
  });
  // A delivery told before the record's last turn finished: its turn is not in a done line yet.
  for (const key of Object.keys(outcomes)) {
    const runId = key.endsWith(":delivery") ? key.slice(0, -":delivery".length) : undefined;
    if (runId !== undefined && !runs.some((run) => run.runId === runId))
      runs.push({ runId, status: "finished", delivery: outcomes[key]! });
  }
  if (entry.runs !== undefined || runs.length > 0) detail.runs = runs;
  if (entry.record !== undefined && stored === undefined) {
    detail.note =
      "The body and headers were not kept (hooks.journal.storePayloads is false): nothing to show, replay or save.";
  } else if (entry.state === "refused" && headers === undefined) {
    detail.note = "Refused requests are listed with their reason; their bodies are never kept.";
  }
  return detail;
}

function verificationOf(entry: JournalEntry, { scheme }: VerifiedBy): string {
  if (entry.state === "refused") return entry.reason ?? entry.code ?? "refused";
  const accepted = scheme === undefined ? "token accepted" : `signature accepted (${scheme})`;
  if (entry.state === "duplicate")
    return `${accepted}; a duplicate delivery: answered with the first answer, nothing done`;
  return accepted;
}

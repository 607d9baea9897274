/** @module The journal's lines, as valibot schemas: what was admitted, handed over, finished, or answered without admission. */
import * as v from "valibot";
import { EventSourceSchema, HOOK_EVENT_SCHEMAS, type HookEventName } from "../events.js";
import { WakeModeSchema } from "../vocabulary.js";
import { expandLine } from "./compact-line.js";
import { expandFormat3 } from "./line-format.js";

/** A planned event of one name, its payload checked against that event's schema. */
function planned<const E extends HookEventName>(event: E) {
  return v.object({ event: v.literal(event), payload: HOOK_EVENT_SCHEMAS[event] });
}

/** One planned event, as the pipeline planned it; read back, each is checked against its own event's schema. */
export const JournalEventSchema = v.variant("event", [
  planned("session:system-event"),
  planned("session:agent-turn"),
  planned("heartbeat:request"),
  planned("delivery:send"),
  planned("session:agent-turn-finished"),
  planned("hooks:request"),
]);

/** What the plugin needs to publish an agent run's summary: the fields of a pending run. */
export const JournalRunSchema = v.object({
  runId: v.string(),
  /** The agent the run was for; absent in records written before agents existed (the default agent). */
  agentId: v.optional(v.string()),
  name: v.string(),
  wakeMode: WakeModeSchema,
  deliver: v.boolean(),
  channel: v.string(),
  to: v.optional(v.string()),
  timeoutSeconds: v.number(),
  source: EventSourceSchema,
  /** Whether its summary is wrapped as untrusted content (false when the mapping allowed raw content). */
  untrusted: v.boolean(),
  contentSource: v.picklist(["Webhook", "Email"]),
});

/** The first answer, kept so a duplicate delivery gets it again after a restart. */
export const JournalResponseSchema = v.object({
  status: v.number(),
  contentType: v.optional(v.string()),
  body: v.optional(v.string()),
});

/** The request as it arrived, without credentials: what `hooks journal replay` runs again. */
export const JournalRequestSchema = v.object({
  method: v.string(),
  /** Path and query, credential parameters removed. */
  url: v.string(),
  headers: v.record(v.string(), v.string()),
  /** The body as UTF-8 text, when it is valid UTF-8. */
  body: v.optional(v.string()),
  /** The body's bytes in base64, when they are not valid UTF-8. */
  bodyBase64: v.optional(v.string()),
});

/**
 * What names a request in every line that lists one (admitted, answered, finished): one declaration, so a listing
 * reads the same fields whichever kind of line it meets.
 */
const REQUEST_ENTRIES = {
  /** The record's key: the request id, or a fresh key when the caller chose the request id. */
  id: v.string(),
  /** The caller's X-Request-Id, when it chose one (then `id` is a key of the journal's own). */
  requestId: v.optional(v.string()),
  /** Epoch milliseconds. */
  at: v.number(),
  hook: v.string(),
  mappingId: v.optional(v.string()),
};

/** An accepted request: written, and made durable, before its answer leaves. */
export const AdmittedLineSchema = v.object({
  t: v.literal("admitted"),
  ...REQUEST_ENTRIES,
  response: JournalResponseSchema,
  /** The key its delivery id is remembered under (duplicates), when it had one. */
  delivery: v.optional(v.string()),
  events: v.array(JournalEventSchema),
  runs: v.optional(v.array(JournalRunSchema)),
  request: v.optional(JournalRequestSchema),
  /** Set on a copy carried forward from an expiring segment whose turns had been handed over. */
  handed: v.optional(v.boolean()),
  /** On such a copy: the turns that had been handed over, when only some had (the others waited for a slot). */
  handedRuns: v.optional(v.array(v.string())),
  /** The journal key of the request this one replays (the inspector's replay), when it is a replay. */
  replayOf: v.optional(v.string()),
});

/** The record's agent turns went to the host: after a restart they are reported interrupted, never run again. */
export const HandedLineSchema = v.object({
  t: v.literal("handed"),
  id: v.string(),
  at: v.number(),
  /**
   * The turns that went, when a record's turns leave one by one (a fan-out waiting for its mapping's slots); unset:
   * all of them. A reader that does not know the field takes the whole record as handed: interrupted, never twice.
   */
  runs: v.optional(v.array(v.string())),
});

/** What a finished turn's reply was, without its text: words for a person, silence (`NO_REPLY`, a heartbeat's ack), or nothing. */
export const ReplyKindSchema = v.picklist(["text", "silent", "empty"]);

export const RunOutcomeSchema = v.object({
  runId: v.string(),
  status: v.picklist(["ok", "error", "timeout", "interrupted"]),
  /** Only for a turn that finished `ok`. */
  reply: v.optional(ReplyKindSchema),
});

/**
 * What became of the record's effects, by key: a planned system event's id → `queued` | `coalesced` | `duplicate` (as
 * the host told it), `<runId>:delivery` → `sent` | `failed: <reason>`.
 */
export const OutcomesSchema = v.record(v.string(), v.string());

/** A planned event as a compacted record keeps it: its name and id, not its text. */
export const PlannedIdSchema = v.object({
  event: v.string(),
  id: v.string(),
  /** The agent it was for, when the event named one. */
  agentId: v.optional(v.string()),
});

/** Everything the record caused happened: events emitted and, for agent turns, summaries published. */
export const DoneLineSchema = v.object({
  t: v.literal("done"),
  id: v.string(),
  at: v.number(),
  runs: v.optional(v.array(RunOutcomeSchema)),
  /** Finished by the recovery at start, not by the run that admitted it. */
  recovered: v.optional(v.boolean()),
  /** What the host did with the planned system events, told while they were emitted. */
  outcomes: v.optional(OutcomesSchema),
});

/** An outcome the host told later than the `done` line could carry it (a delivery's result). Listed, never acted on. */
export const OutcomeLineSchema = v.object({
  t: v.literal("outcome"),
  id: v.string(),
  at: v.number(),
  outcomes: OutcomesSchema,
});

/**
 * The answer that left, when it was not the one admitted: a caller that waited for its agent turn (`waitForCompletion`,
 * `response: "completion"`) got the turn's outcome (200) instead of the admission answer (202), listed; a wake's answer
 * says what became of its events (`eventOutcome`), known only once they were handed over, and with a delivery id it
 * is what that delivery's duplicates get from then on, after a restart too.
 */
export const RespondedLineSchema = v.object({
  t: v.literal("responded"),
  id: v.string(),
  at: v.number(),
  status: v.number(),
  /** The delivery whose duplicates get `response` instead of the admitted answer. */
  delivery: v.optional(v.string()),
  response: v.optional(JournalResponseSchema),
});

/** A request answered without being admitted: a refusal, or a duplicate given its first answer. Listed, never replayed. */
export const AnsweredLineSchema = v.object({
  t: v.literal("answered"),
  ...REQUEST_ENTRIES,
  status: v.number(),
  /** The error code of a refusal, or `DUPLICATE` for a duplicate delivery. */
  code: v.string(),
  /**
   * Why, finer than the code: TOKEN_MISSING, TOKEN_WRONG, SIGNATURE_MISSING, SIGNATURE_MALFORMED, SIGNATURE_MISMATCH,
   * SIGNATURE_INVALID, TIMESTAMP_TOO_OLD, NO_MAPPING, or the code itself.
   */
  reason: v.optional(v.string()),
  /** The message the sender got. */
  error: v.optional(v.string()),
  /** The client address the request came from (behind a trusted proxy, the forwarded one). */
  client: v.optional(v.string()),
  method: v.optional(v.string()),
  /** Path and query, credential parameters removed. */
  url: v.optional(v.string()),
  /** The headers as sent, a credential's value replaced by `[redacted]`; cut short when they are many. */
  headers: v.optional(v.record(v.string(), v.string())),
  /** Refusals from the same client address left out since its previous listed one (the per-minute limit). */
  suppressed: v.optional(v.number()),
});

/**
 * A finished record once its segment is closed: the admitted line, its hand-over and its `done` line as one small
 * line. The planned events (their text) are gone; what a listing, a replay and the duplicate check need stays.
 */
export const FinishedLineSchema = v.object({
  t: v.literal("finished"),
  ...REQUEST_ENTRIES,
  /** The status the caller got (the turn's outcome for a caller that waited for it). */
  status: v.number(),
  /** Its delivery id, and the first answer a duplicate gets again. */
  delivery: v.optional(v.string()),
  response: v.optional(JournalResponseSchema),
  /** Kept when it was stored (`storePayloads`): `hooks journal replay` runs it. */
  request: v.optional(JournalRequestSchema),
  handedAt: v.optional(v.number()),
  /** Absent when its `done` line is in a later segment (which still holds it). */
  doneAt: v.optional(v.number()),
  runs: v.optional(v.array(RunOutcomeSchema)),
  recovered: v.optional(v.boolean()),
  /** The journal key of the request this one replays, when it is a replay. */
  replayOf: v.optional(v.string()),
  /** The planned events' names and ids (their text is gone). */
  planned: v.optional(v.array(PlannedIdSchema)),
  outcomes: v.optional(OutcomesSchema),
});

export const JournalLineSchema = v.variant("t", [
  AdmittedLineSchema,
  HandedLineSchema,
  DoneLineSchema,
  AnsweredLineSchema,
  RespondedLineSchema,
  FinishedLineSchema,
  OutcomeLineSchema,
]);

export type JournalLine = v.InferOutput<typeof JournalLineSchema>;
export type AdmittedLine = v.InferOutput<typeof AdmittedLineSchema>;
export type DoneLine = v.InferOutput<typeof DoneLineSchema>;
export type AnsweredLine = v.InferOutput<typeof AnsweredLineSchema>;
export type FinishedLine = v.InferOutput<typeof FinishedLineSchema>;
export type JournalRun = v.InferOutput<typeof JournalRunSchema>;
export type JournalRequest = v.InferOutput<typeof JournalRequestSchema>;
export type JournalResponse = v.InferOutput<typeof JournalResponseSchema>;
export type RunOutcome = v.InferOutput<typeof RunOutcomeSchema>;
export type ReplyKind = v.InferOutput<typeof ReplyKindSchema>;
export type Outcomes = v.InferOutput<typeof OutcomesSchema>;
export type PlannedId = v.InferOutput<typeof PlannedIdSchema>;
export type OutcomeLine = v.InferOutput<typeof OutcomeLineSchema>;

/**
 * A planned event's name and the id a host knows it by: a system event's id, a turn's (or a delivery's) run id, a
 * heartbeat's reason.
 */
export function plannedIds(events: AdmittedLine["events"]): PlannedId[] {
  return events.map((planned) => {
    const payload = planned.payload as {
      eventId?: string;
      runId?: string;
      reason?: string;
      agentId?: string;
    };
    const id = payload.eventId ?? payload.runId ?? payload.reason ?? "";
    return payload.agentId === undefined
      ? { event: planned.event, id }
      : { event: planned.event, id, agentId: payload.agentId };
  });
}

/** Parses one line; undefined for a torn or foreign line (a crash mid-write, a hand edit). */
export function parseJournalLine(text: string): JournalLine | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  json = expandFormat3(json);
  expandLine(json);
  const parsed = v.safeParse(JournalLineSchema, json);
  return parsed.success ? parsed.output : undefined;
}

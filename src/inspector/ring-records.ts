/** @module Keeps the inspector's ring as requests happen: what the journal records (as its observer) and the `hooks:request` event every request causes. */
import type { Clock } from "../clock.js";
import type { HookBus, HookRequest } from "../events.js";
import type {
  AdmittedRecord,
  AnsweredRecord,
  Journal,
  JournalObserver,
  Outcomes,
  RunOutcome,
} from "../journal/journal.js";
import type { InspectorSummary } from "./inspector-source.js";
import { outcomeText } from "./outcome-text.js";
import type { SummaryRing } from "./summary-ring.js";

/**
 * Keeps the ring as the journal writes: a row for each admitted or listed request, its state and outcome as it
 * finishes. Observes the journal (no wrapper around it); returns the function that stops observing.
 */
export function observeJournal(journal: Journal, ring: SummaryRing): () => void {
  /**
   * Outcomes told before the record's `done` line (a delivery sent before its last turn finished), by key, bounded;
   * and what a done row's outcome was made of, for a delivery told after it (gone with the row).
   */
  const told = new Map<string, Outcomes>();
  const madeOf = new WeakMap<InspectorSummary, { outcomes?: Outcomes; runs?: readonly RunOutcome[] }>();
  const setOutcome = (
    row: InspectorSummary,
    outcomes: Outcomes | undefined,
    runs: readonly RunOutcome[] | undefined,
  ) => {
    const text = outcomeText(outcomes, runs);
    if (text === undefined) return;
    row.outcome = text;
    madeOf.set(row, { ...(outcomes && { outcomes }), ...(runs && { runs }) });
  };
  const observer: JournalObserver = {
    admitted: (record) => ring.push(admittedSummary(record)),
    answered(record, listed) {
      // Left out by the journal's limits (a flood): not in the list either, or a flood would push out every real row.
      if (!listed) leftOutOf(ring).add(record.requestId ?? record.id);
      else ring.push(answeredSummary(record));
    },
    done(id, runs, outcomes) {
      const row = ring.byKey(id);
      if (row === undefined) return;
      row.state = finishedState(runs);
      const early = told.get(id);
      if (early !== undefined) told.delete(id);
      setOutcome(row, early === undefined ? outcomes : { ...outcomes, ...early }, runs);
    },
    outcome(id, outcomes) {
      const row = ring.byKey(id);
      if (row === undefined) return;
      if (row.state === "pending") {
        if (told.size < ring.size || told.has(id)) told.set(id, { ...told.get(id), ...outcomes });
        return;
      }
      const before = madeOf.get(row);
      setOutcome(row, { ...before?.outcomes, ...outcomes }, before?.runs);
    },
    responded(id, status) {
      const row = ring.byKey(id);
      if (row) row.status = status;
    },
  };
  return journal.observe?.(observer) ?? (() => undefined);
}

/**
 * Listens to `hooks:request`: the duration of the request the journal listed, or a row of its own for a request
 * the journal did not record (refused before its credentials were accepted, or no journal at all).
 */
export function listenForRequests(bus: HookBus, ring: SummaryRing, clock: Clock): () => void {
  const leftOut = leftOutOf(ring);
  const onRequest = (event: HookRequest) => {
    const { requestId } = event.source;
    if (leftOut.delete(requestId)) return;
    const row = ring.byRequest(requestId);
    if (row !== undefined && row.durationMs === undefined && row.hook === event.hook) {
      row.durationMs = event.durationMs;
      row.status = event.status;
      return;
    }
    const added: InspectorSummary = {
      id: requestId,
      requestId,
      at: clock.now(),
      hook: event.hook,
      status: event.status,
      state: event.status >= 400 ? "refused" : "answered",
      durationMs: event.durationMs,
    };
    if (event.mappingId !== undefined) added.mappingId = event.mappingId;
    ring.push(added);
  };
  bus.on("hooks:request", onRequest);
  return () => bus.off("hooks:request", onRequest);
}

/** Bounded: ids whose `hooks:request` event never came (a host without the event) are dropped past a few. */
const MAX_LEFT_OUT = 64;
function leftOutOf(ring: SummaryRing): Set<string> {
  if (ring.leftOut.size >= MAX_LEFT_OUT) ring.leftOut.clear();
  return ring.leftOut;
}

/** A finished record's state: a turn that a restart cut short makes it `interrupted`. */
export function finishedState(runs: readonly RunOutcome[] | undefined): string {
  return runs?.some((run) => run.status === "interrupted") ? "interrupted" : "done";
}

export function admittedSummary(record: AdmittedRecord): InspectorSummary {
  const row: InspectorSummary = {
    id: record.id,
    requestId: record.requestId ?? record.id,
    at: record.at,
    hook: record.hook,
    status: record.response.status,
    state: "pending",
  };
  if (record.mappingId !== undefined) row.mappingId = record.mappingId;
  if (record.replayOf !== undefined) row.replayOf = record.replayOf;
  return row;
}

export function answeredSummary(record: AnsweredRecord): InspectorSummary {
  const duplicate = record.code === "DUPLICATE";
  const row: InspectorSummary = {
    id: record.id,
    requestId: record.requestId ?? record.id,
    at: record.at,
    hook: record.hook,
    status: record.status,
    state: duplicate ? "duplicate" : "refused",
  };
  if (record.mappingId !== undefined) row.mappingId = record.mappingId;
  if (!duplicate) row.code = record.code;
  if (record.reason !== undefined) row.reason = record.reason;
  if (record.client !== undefined) row.client = record.client;
  return row;
}

/** @module Checks a replay against a fixture's `expect` block, and writes the block from a replay (`--update`). */
import type { PlannedEvent } from "../events.js";
import type { FixtureExpectation } from "./fixture-schema.js";
import type { ReplayReport } from "./replay-fixture.js";

export interface ExpectationResult {
  passed: boolean;
  /** One line per mismatch, written for a person. */
  problems: string[];
}

/** `actual` contains `expected`: objects by subset, arrays element by element with equal length, the rest equal. */
export function containsPartial(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== "object") return Object.is(actual, expected);
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => containsPartial(actual[i], item))
    );
  }
  if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([key, value]) =>
    containsPartial((actual as Record<string, unknown>)[key], value),
  );
}

export function checkExpectation(report: ReplayReport, expectation: FixtureExpectation): ExpectationResult {
  const problems: string[] = [];
  if (report.status !== expectation.status)
    problems.push(`status: expected ${expectation.status}, got ${report.status}`);
  for (const [index, wanted] of (expectation.events ?? []).entries()) {
    const sameName = report.events.filter((event) => event.event === wanted.event);
    if (sameName.some((event) => containsPartial(event.payload, wanted.match))) continue;
    problems.push(
      `events[${index}]: no ${wanted.event} event contains ${JSON.stringify(wanted.match)}` +
        (sameName.length > 0
          ? `; closest: ${JSON.stringify(stableFields(sameName[0]!))}`
          : `; the replay emitted ${report.events.length === 0 ? "no events" : report.events.map((e) => e.event).join(", ")}`),
    );
  }
  const expectedCount = expectation.events?.length;
  if (expectedCount !== undefined && expectedCount === 0 && report.events.length > 0) {
    problems.push(`events: expected none, got ${report.events.map((e) => e.event).join(", ")}`);
  }
  return { passed: problems.length === 0, problems };
}

const GENERATED_KEY = /^hook:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The parts of an event that are the same on every run: no ids, no random markers, no request id. */
export function stableFields(planned: PlannedEvent): Record<string, unknown> {
  const { source, ...payload } = planned.payload as Record<string, unknown> & {
    source: { hook: string; mappingId?: string };
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (key === "runId" || key === "eventId") continue;
    // The wrapped text carries a random marker id; `raw` holds the same content and is stable.
    if ((key === "message" || key === "text") && payload.untrusted === true && "raw" in payload) continue;
    if (key === "sessionKey" && typeof value === "string" && GENERATED_KEY.test(value)) continue;
    out[key] = value;
  }
  const stableSource: Record<string, unknown> = { hook: source.hook };
  if (source.mappingId !== undefined) stableSource.mappingId = source.mappingId;
  return { source: stableSource, ...out };
}

/** The `expect` block that pins what this replay produced. */
export function expectationFrom(report: ReplayReport): FixtureExpectation {
  return {
    status: report.status,
    events: report.events.map((planned) => ({ event: planned.event, match: stableFields(planned) })),
  };
}

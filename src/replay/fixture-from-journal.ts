/** @module Turns a journal record's stored request into a fixture: replayed through the pipeline, sent again, or saved. */
import type { AdmittedRecord } from "../journal/journal.js";
import { fixtureFromRequest } from "./fixture-file.js";
import type { FixtureInput } from "./fixture-schema.js";

/** Undefined when the record kept no request (`hooks.journal.storePayloads: false`). */
export function fixtureFromRecord(record: AdmittedRecord): FixtureInput | undefined {
  const stored = record.request;
  if (stored === undefined) return undefined;
  const url = new URL(stored.url, "http://journal.invalid");
  return fixtureFromRequest({
    name: `${record.hook} at ${new Date(record.at).toISOString()}`,
    description: `request ${record.requestId ?? record.id}, taken from the journal`,
    method: stored.method,
    hook: record.hook,
    headers: stored.headers,
    query: Object.fromEntries(url.searchParams),
    rawBody:
      stored.bodyBase64 !== undefined
        ? Buffer.from(stored.bodyBase64, "base64")
        : Buffer.from(stored.body ?? "", "utf8"),
  });
}

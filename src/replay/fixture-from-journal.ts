/** @module Turns a journal record's stored request into a fixture: replayed through the pipeline, sent again, or saved. */
import type { AdmittedRecord } from "../journal/journal.js";
import { isCredentialHeader } from "../safety/credentials.js";
import type { FixtureInput } from "./fixture-schema.js";

/** Headers that describe one transfer (or this request's identity), not the request: a fixture leaves them out. */
const TRANSFER_HEADERS: ReadonlySet<string> = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "host",
  "keep-alive",
  "x-request-id",
]);

/** Undefined when the record kept no request (`hooks.journal.storePayloads: false`). */
export function fixtureFromRecord(record: AdmittedRecord): FixtureInput | undefined {
  const stored = record.request;
  if (stored === undefined) return undefined;
  const url = new URL(stored.url, "http://journal.invalid");
  // A record written before a header was known for a credential may still hold it: a fixture never does.
  const headers = Object.fromEntries(
    Object.entries(stored.headers).filter(
      ([name]) => !TRANSFER_HEADERS.has(name) && !isCredentialHeader(name),
    ),
  );
  const query = Object.fromEntries(url.searchParams);
  return {
    name: `${record.hook} ${record.requestId ?? record.id}`,
    description: `accepted at ${new Date(record.at).toISOString()}, taken from the journal`,
    request: {
      method: stored.method,
      path: url.pathname,
      headers,
      ...(Object.keys(query).length > 0 ? { query } : {}),
      ...(stored.bodyBase64 !== undefined
        ? { rawBodyBase64: stored.bodyBase64 }
        : { rawBody: stored.body ?? "" }),
    },
  };
}

/** @module What the assistant's tools may read of the inspector: list, detail and dry run, never replay. */

/** Filters of the request list, as the inspector takes them. */
export interface InspectorReadFilter {
  /** "2xx", "4xx", "5xx", an exact status such as "401", or a journal state ("refused", "duplicate", …). */
  status?: string;
  hook?: string;
  /** A substring of the request id, hook, mapping id, reason code or client address. */
  text?: string;
  limit?: number;
}

/**
 * The read-only part of the plugin's inspector source. Everything it returns is redacted already (credential headers
 * `[redacted]`, credential query parameters removed); the tools pass it on as it is and add nothing from elsewhere.
 */
export interface InspectorReader {
  /** False when the journal is off: only recent requests since the start are known, without bodies. */
  readonly journaling: boolean;
  list(filter: InspectorReadFilter): Promise<readonly object[]>;
  /** Undefined: no such request is known. */
  detail(id: string): Promise<object | undefined>;
  /** What the stored request would produce now, emitting nothing. Undefined: no such stored request. */
  dryRun(id: string): Promise<unknown>;
}

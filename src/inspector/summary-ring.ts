/** @module The newest request summaries in memory, bounded: the live list reads them without touching the journal. */
import type { InspectorSummary } from "./inspector-source.js";

/** How many summaries a ring keeps by default: a few minutes of a busy intake, weeks of a quiet one. */
export const DEFAULT_RING_SIZE = 2_000;

/** Summaries by arrival, the oldest dropped past `size`; looked up by journal key and by X-Request-Id. */
export class SummaryRing {
  /**
   * Request ids the journal left out since their `hooks:request` event (which follows in the same turn and takes the
   * id out again): the ring's own, so the journal observer and the request listener of one inspector share it.
   */
  readonly leftOut = new Set<string>();
  private readonly rows: (InspectorSummary | undefined)[];
  /** Where the next row goes. */
  private next = 0;
  private count = 0;

  constructor(readonly size: number = DEFAULT_RING_SIZE) {
    this.rows = new Array(size);
  }

  get length(): number {
    return this.count;
  }

  /** Whether rows were dropped (older requests are then only in the journal). */
  get full(): boolean {
    return this.count === this.size;
  }

  /**
   * No index beside the rows: the rows a request looks up (its own, as it finishes) are among the newest, so a scan
   * from the newest costs less than keeping two maps up to date on every request (bench/PROFILE.md, "Inspector").
   */
  push(row: InspectorSummary): void {
    this.rows[this.next] = row;
    this.next = (this.next + 1) % this.size;
    if (this.count < this.size) this.count++;
  }

  byKey(id: string): InspectorSummary | undefined {
    return this.newest((row) => row.id === id);
  }

  /** The newest row answered with this X-Request-Id (a caller may send one id twice). */
  byRequest(requestId: string): InspectorSummary | undefined {
    return this.newest((row) => row.requestId === requestId);
  }

  private newest(wanted: (row: InspectorSummary) => boolean): InspectorSummary | undefined {
    for (let i = 1; i <= this.count; i++) {
      const row = this.rows[(this.next - i + this.size) % this.size]!;
      if (wanted(row)) return row;
    }
    return undefined;
  }

  /** Newest first, while `visit` returns true. */
  each(visit: (row: InspectorSummary) => boolean): void {
    for (let i = 1; i <= this.count; i++) {
      const row = this.rows[(this.next - i + this.size) % this.size]!;
      if (!visit(row)) return;
    }
  }

  /**
   * Puts rows read from the journal (oldest first) before the live ones, skipping those already here: a request
   * that arrived while the journal was being read is not listed twice.
   */
  seed(older: readonly InspectorSummary[]): void {
    const live: InspectorSummary[] = [];
    this.each((row) => {
      live.push(row);
      return true;
    });
    const known = new Set(live.map((row) => row.id));
    const fresh = older.filter((row) => !known.has(row.id));
    this.rows.fill(undefined);
    this.next = 0;
    this.count = 0;
    for (const row of [...fresh, ...live.reverse()].slice(-this.size)) this.push(row);
  }
}

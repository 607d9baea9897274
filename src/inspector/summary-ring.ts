/** @module The newest request summaries in memory, bounded: the live list reads them without touching the journal. */
import type { InspectorSummary } from "./inspector-source.js";

/** How many summaries a ring keeps by default: a few minutes of a busy intake, weeks of a quiet one. */
export const DEFAULT_RING_SIZE = 2_000;

/** Summaries by arrival, the oldest dropped past `size`; looked up by journal key and by X-Request-Id. */
export class SummaryRing {
  private readonly rows: (InspectorSummary | undefined)[];
  /** Where the next row goes. */
  private next = 0;
  private count = 0;
  private readonly byId = new Map<string, InspectorSummary>();
  private readonly byRequestId = new Map<string, InspectorSummary>();

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

  push(row: InspectorSummary): void {
    const old = this.rows[this.next];
    if (old !== undefined) this.forget(old);
    this.rows[this.next] = row;
    this.next = (this.next + 1) % this.size;
    if (this.count < this.size) this.count++;
    this.byId.set(row.id, row);
    this.byRequestId.set(row.requestId, row);
  }

  byKey(id: string): InspectorSummary | undefined {
    return this.byId.get(id);
  }

  /** The newest row answered with this X-Request-Id (a caller may send one id twice). */
  byRequest(requestId: string): InspectorSummary | undefined {
    return this.byRequestId.get(requestId);
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
    const fresh = older.filter((row) => !this.byId.has(row.id));
    this.rows.fill(undefined);
    this.next = 0;
    this.count = 0;
    this.byId.clear();
    this.byRequestId.clear();
    for (const row of [...fresh, ...live.reverse()].slice(-this.size)) this.push(row);
  }

  private forget(row: InspectorSummary): void {
    if (this.byId.get(row.id) === row) this.byId.delete(row.id);
    if (this.byRequestId.get(row.requestId) === row) this.byRequestId.delete(row.requestId);
  }
}

/** @module This gateway's delivery ids as it wrote them to Redis (claims in progress, first answers), kept to put back into a server that lost them. */
import type { Clock } from "../clock.js";
import { OldestFirst } from "./oldest-first.js";

/** One id as Redis should hold it: its value there, and for how much longer. */
export interface KeptDelivery {
  key: string;
  /** The value exactly as stored in Redis: a claim in progress or an answer. */
  value: string;
  leftMs: number;
}

interface Entry {
  value: string;
  until: number;
}

/**
 * The ids the journal holds (what a restarted gateway remembers), plus the claims of requests in progress, in
 * memory: a server that restarted without persistence gets them back in a few round trips, without reading the
 * journal from disk while every delivery waits. Bounded like the journal's hand-back (`hooks.dedupe.maxEntries`,
 * oldest first).
 */
export class KeptDeliveries {
  private readonly entries = new Map<string, Entry>();
  private readonly oldest = new OldestFirst(this.entries);

  constructor(
    private readonly max: number,
    private readonly clock: Clock,
  ) {}

  keep(key: string, value: string, keepMs: number): void {
    // Re-inserted, so the Map stays oldest-first for the trim.
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.clock.now() + keepMs });
    this.oldest.trimTo(this.max);
  }

  /** What is kept of `key` while within its time: a Map lookup, for a claim the server calls first. */
  get(key: string): KeptDelivery | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const leftMs = entry.until - this.clock.now();
    return leftMs > 0 ? { key, value: entry.value, leftMs } : undefined;
  }

  /** Forgets `key` if it still holds `value` (a claim released; an answer that replaced it stays). */
  forget(key: string, value: string): void {
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }

  /** Everything still within its time, oldest first; what has expired is dropped on the way. */
  list(): KeptDelivery[] {
    const now = this.clock.now();
    const live: KeptDelivery[] = [];
    for (const [key, { value, until }] of this.entries) {
      if (until <= now) this.entries.delete(key);
      else live.push({ key, value, leftMs: until - now });
    }
    return live;
  }
}

/** @module The inspector's reads of the journal on disk, one at a time: a request's entry, its stored request as a fixture, rows older than the ring. */
import { findJournalEntry } from "../journal/find-entry.js";
import { type JournalEntry, readJournal } from "../journal/read-journal.js";
import { fixtureFromRecord } from "../replay/fixture-from-journal.js";
import type { FixtureInput } from "../replay/fixture-schema.js";
import type { SummaryRing } from "./summary-ring.js";

/** An accepted request the journal kept with its body, as a fixture that can be replayed or saved. */
export interface StoredRequest {
  entry: JournalEntry;
  fixture: FixtureInput;
}

export class JournalReads {
  private readonly ring: SummaryRing;
  /** The journal's directory; undefined when there is no journal. */
  readonly dir: string | undefined;

  /**
   * Reads of the journal on disk, one after the other: a few clicks (or an assistant's tool calls) on a large journal
   * cost one read's memory and CPU at a time, never several together beside the intake.
   */
  private scanning: Promise<unknown> = Promise.resolve();

  constructor(ring: SummaryRing, dir: string | undefined) {
    this.ring = ring;
    this.dir = dir;
  }

  /**
   * The journal entry of a request, by journal key or X-Request-Id, with its whole record: segments are read newest
   * first and no further than the one that names it, so a detail costs the same in a journal of a week as of an hour.
   */
  async findEntry(id: string): Promise<JournalEntry | undefined> {
    const { dir } = this;
    if (dir === undefined) return undefined;
    const row = this.ring.byKey(id) ?? this.ring.byRequest(id);
    return this.oneScanAtATime(() => findJournalEntry(dir, row ? [id, row.id, row.requestId] : [id]));
  }

  /** Undefined when the journal does not know the request or kept no body for it. */
  async storedRequest(id: string): Promise<StoredRequest | undefined> {
    const entry = await this.findEntry(id);
    const fixture = entry?.record ? fixtureFromRecord(entry.record) : undefined;
    return fixture === undefined || entry === undefined ? undefined : { entry, fixture };
  }

  /** Every entry from before `until` (of `hook`, when given), oldest first; none without a journal. */
  async entriesBefore(until: number, hook: string | undefined): Promise<JournalEntry[]> {
    const { dir } = this;
    if (dir === undefined) return [];
    return this.oneScanAtATime(() =>
      readJournal(dir, { where: (at, entryHook) => at < until && (!hook || entryHook === hook) }),
    );
  }

  private oneScanAtATime<T>(scan: () => Promise<T>): Promise<T> {
    const run = this.scanning.then(scan, scan);
    this.scanning = run.catch(() => undefined);
    return run;
  }
}

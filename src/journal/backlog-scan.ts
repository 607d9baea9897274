/** @module What a start gathers from journal lines: records not finished, delivery ids within their window, the newest finished records' events. */
import { OldestFirst } from "../store/oldest-first.js";
import type { AdmittedRecord, RememberedDelivery, StoredEvent } from "./journal.js";
import type { AdmittedLine, JournalLine } from "./records.js";

/**
 * How many of the newest finished records with system events the host is asked about at start: enough to span more
 * than a second of a busy gateway (what a lost write-ahead log takes beyond its last sync), few enough that the
 * check and the checkpoint that carries them stay small (a record's events are about 100 bytes there).
 */
export const STORED_CHECKED = 256;

/** The newest finished records' system events, for the host's check at start; a ring, so adding one is O(1). */
export class NewestStored {
  private readonly records: StoredEvent[][] = [];
  /** Where the next record goes once the ring is full (it is then the oldest). */
  private next = 0;

  constructor(seed: readonly StoredEvent[][] = []) {
    for (const events of seed.slice(-STORED_CHECKED)) this.records.push(events);
  }

  add(record: Pick<AdmittedRecord, "at" | "events">): void {
    const events = record.events.flatMap((planned) =>
      planned.event === "session:system-event"
        ? [{ eventId: planned.payload.eventId, sessionKey: planned.payload.sessionKey, at: record.at }]
        : [],
    );
    if (events.length === 0) return;
    if (this.records.length < STORED_CHECKED) {
      this.records.push(events);
      return;
    }
    this.records[this.next] = events;
    this.next = (this.next + 1) % STORED_CHECKED;
  }

  /** One array per record, newest last (what a checkpoint keeps). */
  snapshot(): StoredEvent[][] {
    return this.ordered().map((events) => [...events]);
  }

  events(): StoredEvent[] {
    return this.ordered().flat();
  }

  private ordered(): StoredEvent[][] {
    return [...this.records.slice(this.next), ...this.records.slice(0, this.next)];
  }
}

/** Delivery ids by key, newest last, at most `max` of them (the oldest go first). */
export class RecentDeliveries {
  private readonly byKey = new Map<string, RememberedDelivery>();
  /** A start adds every id of the journal: a fresh iterator per drop would walk the deleted entries each time. */
  private readonly oldest = new OldestFirst(this.byKey);

  constructor(private readonly max: number) {}

  add(delivery: RememberedDelivery): void {
    // Re-inserted, so the Map stays oldest-first for the trim.
    this.byKey.delete(delivery.key);
    this.byKey.set(delivery.key, delivery);
    this.oldest.trimTo(this.max);
  }

  /** Those admitted after `since` (epoch ms), oldest first. */
  since(since: number): RememberedDelivery[] {
    return [...this.byKey.values()].filter((delivery) => delivery.at > since);
  }
}

export interface ScannedRecord {
  record: AdmittedLine;
  handed: boolean;
  /** Its turns that went, when only some did. */
  handedRuns?: string[] | undefined;
  seq: number;
}

/** Facts about one segment, gathered from its lines. */
export interface ScannedSegment {
  seq: number;
  newestAt: number;
  holdsDeliveries: boolean;
}

/** Applies lines in file order; what remains in `admitted` afterwards is what the previous run did not finish. */
export class BacklogScan {
  readonly admitted = new Map<string, ScannedRecord>();

  constructor(
    readonly deliveries: RecentDeliveries,
    readonly stored: NewestStored,
  ) {}

  apply(line: JournalLine, segment: ScannedSegment): void {
    segment.newestAt = Math.max(segment.newestAt, line.at);
    if (line.t === "admitted") {
      // A record carried forward from an expired segment says in itself whether its turns were handed over.
      this.admitted.set(line.id, {
        record: line,
        handed: line.handed === true,
        handedRuns: line.handedRuns,
        seq: segment.seq,
      });
      if (line.delivery !== undefined) {
        segment.holdsDeliveries = true;
        this.deliveries.add({ key: line.delivery, response: line.response, at: line.at });
      }
    } else if (line.t === "responded") {
      // A wake's answer, told once its events were handed over: its delivery's duplicates get this one.
      if (line.delivery !== undefined && line.response !== undefined) {
        segment.holdsDeliveries = true;
        this.deliveries.add({ key: line.delivery, response: line.response, at: line.at });
      }
    } else if (line.t === "handed") {
      const entry = this.admitted.get(line.id);
      if (entry && line.runs === undefined) entry.handed = true;
      else if (entry && line.runs !== undefined)
        entry.handedRuns = [...(entry.handedRuns ?? []), ...line.runs];
    } else if (line.t === "done") {
      const entry = this.admitted.get(line.id);
      if (entry) this.stored.add(entry.record);
      this.admitted.delete(line.id);
    } else if (line.t === "finished") {
      segment.newestAt = Math.max(segment.newestAt, line.doneAt ?? line.at);
      this.admitted.delete(line.id);
      if (line.delivery !== undefined && line.response !== undefined) {
        segment.holdsDeliveries = true;
        this.deliveries.add({ key: line.delivery, response: line.response, at: line.at });
      }
    }
  }
}

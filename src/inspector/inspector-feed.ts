/** @module The inspector of one plugin instance: its ring fed as requests happen, seeded from the journal at start, and the source the page reads. */
import type { Clock } from "../clock.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal } from "../journal/journal.js";
import type { InspectorSource } from "./inspector-source.js";
import { createJournalInspector, type JournalInspectorDeps } from "./journal-inspector.js";
import { readRecentSummaries } from "./recent-summaries.js";
import { listenForRequests, observeJournal } from "./ring-records.js";
import { SummaryRing } from "./summary-ring.js";

export interface InspectorFeedOptions {
  bus: HookBus;
  /** The journal whose records the ring lists as they are written. */
  journal: Journal;
  clock: Clock;
  journalDir: string | undefined;
  logger: HostLogger;
  live: JournalInspectorDeps["live"];
  hostSecrets?: JournalInspectorDeps["hostSecrets"];
  /** Summaries kept in memory. */
  ringSize?: number;
}

export interface InspectorFeed {
  readonly source: InspectorSource;
  /** Seeds the ring from the journal's newest segments (after the journal opened). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createInspectorFeed(options: InspectorFeedOptions): InspectorFeed {
  const ring = new SummaryRing(options.ringSize);
  const source = createJournalInspector({
    ring,
    journalDir: options.journalDir,
    live: options.live,
    hostSecrets: options.hostSecrets,
  });
  const unlisten = listenForRequests(options.bus, ring, options.clock);
  const unobserve = observeJournal(options.journal, ring);
  return {
    source,
    async start() {
      if (options.journalDir === undefined) return;
      try {
        ring.seed(await readRecentSummaries(options.journalDir, ring.size));
      } catch (error) {
        // The inspector then lists what arrives from now on; the intake is not held up for it.
        options.logger.warn(
          `inspector: could not read the journal's newest requests: ${(error as Error).message}`,
        );
      }
    },
    async stop() {
      unlisten();
      unobserve();
      await source.close();
    },
  };
}

/** The inspector of an instance, made when first asked for: until then none of its code runs on a request. */
export interface InspectorOnDemand {
  /** The source the page reads, the feed made (and seeded, once the service started) on the first call. */
  source(): InspectorSource;
  /** The service started: a feed made already is seeded now, one made later at once. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function inspectorOnDemand(options: InspectorFeedOptions): InspectorOnDemand {
  let feed: { made: InspectorFeed; source: InspectorSource } | undefined;
  let started = false;
  return {
    source() {
      if (feed === undefined) {
        const made = createInspectorFeed(options);
        // Seeded from the journal's newest segments, so what happened before it was asked for is listed too: the
        // list waits for that the first time.
        feed = { made, source: started ? afterSeed(made.source, made.start()) : made.source };
      }
      return feed.source;
    },
    async start() {
      started = true;
      await feed?.made.start();
    },
    async stop() {
      started = false;
      const stopping = feed;
      feed = undefined;
      await stopping?.made.stop();
    },
  };
}

/** The list of a feed made while the service runs waits for the feed's seeding; the rest reads the journal. */
function afterSeed(source: InspectorSource, seeded: Promise<void>): InspectorSource {
  return {
    ...source,
    list: async (filter) => {
      await seeded;
      return source.list(filter);
    },
  };
}

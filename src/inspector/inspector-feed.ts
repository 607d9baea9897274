/** @module The inspector of one plugin instance: its ring fed as requests happen, seeded from the journal at start, and the source the page reads. */
import type { Clock } from "../clock.js";
import type { HookBus } from "../events.js";
import type { HostLogger } from "../host/contract.js";
import type { Journal } from "../journal/journal.js";
import type { InspectorSource } from "./inspector-source.js";
import { createJournalInspector, type JournalInspectorDeps } from "./journal-inspector.js";
import { readRecentSummaries } from "./recent-summaries.js";
import { listenForRequests, recordingJournal } from "./ring-records.js";
import { SummaryRing } from "./summary-ring.js";

export interface InspectorFeedOptions {
  bus: HookBus;
  clock: Clock;
  journalDir: string | undefined;
  logger: HostLogger;
  live: JournalInspectorDeps["live"];
  /** Summaries kept in memory. */
  ringSize?: number;
}

export interface InspectorFeed {
  readonly source: InspectorSource;
  /** The journal the pipeline should write to: `inner`, with the ring told of each record. */
  journal(inner: Journal): Journal;
  /** Seeds the ring from the journal's newest segments (after the journal opened). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createInspectorFeed(options: InspectorFeedOptions): InspectorFeed {
  const ring = new SummaryRing(options.ringSize);
  const source = createJournalInspector({ ring, journalDir: options.journalDir, live: options.live });
  const unlisten = listenForRequests(options.bus, ring, options.clock);
  return {
    source,
    journal: (inner) => recordingJournal(inner, ring),
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
      await source.close();
    },
  };
}

/** @module The InspectorSource of a plugin instance: the ring for the live list, the journal for details and older rows, the replay pipeline for dry runs, the live pipeline for replays. */
import { Readable } from "node:stream";
import JSON5 from "json5";
import { findJournalEntry } from "../journal/find-entry.js";
import { type JournalEntry, readJournal } from "../journal/read-journal.js";
import type { PipelineResponse } from "../pipeline/request.js";
import type { Pipeline } from "../pipeline/run-pipeline.js";
import { hookSecrets, type PreparedHooks } from "../prepare-hooks.js";
import { fixtureFromRecord } from "../replay/fixture-from-journal.js";
import { validateFixture } from "../replay/load-fixture.js";
import { ReplayPipeline } from "../replay/replay-fixture.js";
import {
  DEFAULT_LIST_LIMIT,
  type InspectorDetail,
  type InspectorFilter,
  type InspectorReplay,
  type InspectorSource,
  type InspectorSummary,
  MAX_LIST_LIMIT,
} from "./inspector-source.js";
import { scrubSecrets } from "./redact.js";
import { detailOf, summaryOf } from "./request-detail.js";
import type { SummaryRing } from "./summary-ring.js";

export interface JournalInspectorDeps {
  ring: SummaryRing;
  /** The journal's directory; undefined when there is no journal. */
  journalDir: string | undefined;
  /** The config and request path new requests run on now (a reload changes them); undefined once stopped. */
  live(): { prepared: PreparedHooks; pipeline: Pipeline } | undefined;
}

export interface JournalInspector extends InspectorSource {
  /** Stops the dry-run pipeline's transform workers. */
  close(): Promise<void>;
}

const STATES = new Set(["done", "interrupted", "pending", "refused", "duplicate", "answered"]);

/** Whether a row passes the list's filters; an unknown status word matches nothing. */
export function matchesFilter(row: InspectorSummary, filter: InspectorFilter): boolean {
  if (filter.hook && row.hook !== filter.hook) return false;
  const status = filter.status?.trim().toLowerCase();
  if (status) {
    if (/^[1-5]xx$/.test(status)) {
      if (Math.floor(row.status / 100) !== Number(status[0])) return false;
    } else if (/^\d{3}$/.test(status)) {
      if (row.status !== Number(status)) return false;
    } else if (!STATES.has(status) || row.state !== status) return false;
  }
  const text = filter.text?.trim().toLowerCase();
  if (text) {
    const haystack = [row.id, row.requestId, row.hook, row.mappingId, row.code, row.reason, row.client];
    if (!haystack.some((field) => field?.toLowerCase().includes(text))) return false;
  }
  return true;
}

function limitOf(filter: InspectorFilter): number {
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  return Number.isFinite(limit)
    ? Math.max(1, Math.min(MAX_LIST_LIMIT, Math.floor(limit)))
    : DEFAULT_LIST_LIMIT;
}

export function createJournalInspector(deps: JournalInspectorDeps): JournalInspector {
  const { ring, journalDir } = deps;
  let dryRuns: { prepared: PreparedHooks; pipeline: ReplayPipeline } | undefined;

  /** One dry-run pipeline per config: its transforms stay loaded across dry runs until a reload. */
  const replayPipelineFor = (prepared: PreparedHooks): ReplayPipeline => {
    if (dryRuns?.prepared !== prepared) {
      void dryRuns?.pipeline.close().catch(() => undefined);
      dryRuns = { prepared, pipeline: new ReplayPipeline(prepared) };
    }
    return dryRuns.pipeline;
  };

  /** The hook token, every signing secret and verify token of the config in force: never shown, wherever they turn up. */
  const secrets = (): string[] => {
    const prepared = deps.live()?.prepared;
    return prepared ? [...hookSecrets(prepared)] : [];
  };

  /**
   * The journal entry of a request, by journal key or X-Request-Id, with its whole record: segments are read newest
   * first and no further than the one that names it, so a detail costs the same in a journal of a week as of an hour.
   */
  const findEntry = async (id: string): Promise<JournalEntry | undefined> => {
    if (journalDir === undefined) return undefined;
    const row = ring.byKey(id) ?? ring.byRequest(id);
    return oneScanAtATime(() => findJournalEntry(journalDir, row ? [id, row.id, row.requestId] : [id]));
  };

  /**
   * Reads of the journal on disk, one after the other: a few clicks (or an assistant's tool calls) on a large journal
   * cost one read's memory and CPU at a time, never several together beside the intake.
   */
  let scanning: Promise<unknown> = Promise.resolve();
  const oneScanAtATime = <T>(scan: () => Promise<T>): Promise<T> => {
    const run = scanning.then(scan, scan);
    scanning = run.catch(() => undefined);
    return run;
  };

  const storedFixture = async (id: string) => {
    const entry = await findEntry(id);
    const fixture = entry?.record ? fixtureFromRecord(entry.record) : undefined;
    return fixture === undefined || entry === undefined ? undefined : { entry, fixture };
  };

  return {
    journaling: journalDir !== undefined,

    async list(filter) {
      const limit = limitOf(filter);
      const { before } = filter;
      const rows: InspectorSummary[] = [];
      let oldest: number | undefined;
      ring.each((row) => {
        oldest = row.at;
        if ((before === undefined || row.at < before) && matchesFilter(row, filter)) rows.push({ ...row });
        return rows.length < limit;
      });
      // Asked for older requests than the ring holds: those are read from the journal, once, not on every poll.
      if (before !== undefined && rows.length < limit && ring.full && journalDir !== undefined) {
        const until = Math.min(before, oldest ?? before);
        const older = await oneScanAtATime(() =>
          readJournal(journalDir, {
            where: (at, hook) => at < until && (!filter.hook || hook === filter.hook),
          }),
        );
        for (let i = older.length - 1; i >= 0 && rows.length < limit; i--) {
          const row = summaryOf(older[i]!);
          if (matchesFilter(row, filter)) rows.push(row);
        }
      }
      return scrubSecrets(rows, secrets());
    },

    async detail(id) {
      const row = ring.byKey(id) ?? ring.byRequest(id);
      const entry = await findEntry(id);
      const scheme = (hook: string) => deps.live()?.prepared.signedPaths.get(hook)?.settings.scheme;
      const signed = (hook: string) => scheme(hook) !== undefined;
      let detail: InspectorDetail | undefined;
      if (entry) detail = detailOf(entry, { scheme: scheme(entry.hook) }, row?.durationMs);
      else if (row) {
        detail = {
          ...row,
          signed: signed(row.hook),
          note:
            journalDir === undefined
              ? "The journal is off (hooks.journal.enabled): only this summary is known."
              : "Not in the journal (yet, or no longer): only this summary is known.",
        };
        if (row.state === "refused" && row.code === undefined)
          detail.verification = `refused with ${row.status}`;
      }
      return scrubSecrets(detail, secrets());
    },

    async dryRun(id) {
      const live = deps.live();
      const stored = await storedFixture(id);
      if (!live || !stored) return undefined;
      const loaded = validateFixture(stored.fixture, `journal:${stored.entry.id}`);
      const report = await replayPipelineFor(live.prepared).replay(loaded);
      return scrubSecrets(
        {
          note: "A dry run of the stored request against the current config: nothing was sent or emitted.",
          status: report.status,
          body: report.body ?? null,
          mappingId: report.mappingId ?? null,
          candidates: report.candidates,
          actions: report.actions,
          events: report.events,
          logs: report.logs.map(({ level, message }) => ({ level, message })),
        },
        secrets(),
      );
    },

    async replay(id) {
      const live = deps.live();
      const stored = await storedFixture(id);
      if (!live || !stored) return undefined;
      const loaded = validateFixture(stored.fixture, `journal:${stored.entry.id}`);
      // As its sender would send it now: the token added, or signed afresh with the path's secret; its delivery id
      // kept, so a delivery the gateway still remembers is answered as a duplicate and nothing happens.
      const built = replayPipelineFor(live.prepared).buildRequest(loaded);
      const headers = { ...built.headers, "content-length": String(built.rawBody.length) };
      let response: PipelineResponse | undefined;
      const exchange = await live.pipeline(
        {
          method: built.method,
          url: built.url,
          headers,
          remoteAddress: "127.0.0.1",
          body: Readable.from(built.rawBody.length > 0 ? [built.rawBody] : []),
          // The page does not wait for an agent turn (up to its timeout): a request that asks to wait gets its
          // admission answer, as a caller that hung up does, and the list shows the turn's end when it comes.
          hungUp: AbortSignal.abort(),
          replayOf: stored.entry.id,
        },
        {
          async respond(answer) {
            response = answer;
          },
        },
      );
      const result: InspectorReplay = {
        status: exchange.status,
        requestId: exchange.requestId,
        duplicate: response?.headers["Idempotent-Replay"] === "true",
        body: parsedBody(response),
      };
      return scrubSecrets(result, secrets());
    },

    async fixture(id) {
      const stored = await storedFixture(id);
      if (!stored) return undefined;
      const comment = [
        `Taken from the journal (request id ${stored.entry.requestId.replace(/[^\x20-\x7e]/g, "?")}); credentials removed.`,
        "Run it: hooks test <this file>, or hooks replay <this file> (a signed path is signed afresh).",
      ];
      const text = `${comment.map((line) => `// ${line}\n`).join("")}${JSON5.stringify(stored.fixture, { space: 2, quote: '"' })}\n`;
      return scrubSecrets(text, secrets());
    },

    async close() {
      const closing = dryRuns?.pipeline.close();
      dryRuns = undefined;
      await closing;
    },
  };
}

function parsedBody(response: PipelineResponse | undefined): unknown {
  if (response?.body === undefined) return null;
  try {
    return JSON.parse(response.body);
  } catch {
    return response.body;
  }
}

/** @module The InspectorSource of a plugin instance: the ring for the live list, the journal for details and older rows, the replay pipeline for dry runs, the live pipeline for replays. */
import { hookSecrets } from "../prepare-hooks.js";
import { DryRunPipelines } from "./dry-run-pipelines.js";
import {
  DEFAULT_LIST_LIMIT,
  type InspectorDetail,
  type InspectorFilter,
  type InspectorSource,
  type InspectorSummary,
  MAX_LIST_LIMIT,
} from "./inspector-source.js";
import { JournalReads } from "./journal-reads.js";
import { scrubSecrets } from "./redact.js";
import { detailOf, summaryOf } from "./request-detail.js";
import { dryRunStored, fixtureText, type LiveConfig, replayStored } from "./stored-request-actions.js";
import type { SummaryRing } from "./summary-ring.js";

export interface JournalInspectorDeps {
  ring: SummaryRing;
  /** The journal's directory; undefined when there is no journal. */
  journalDir: string | undefined;
  /** The config and request path new requests run on now (a reload changes them); undefined once stopped. */
  live(): LiveConfig | undefined;
  /** The host's own secrets (its inspector key, its metrics token), hidden as the config's are. */
  hostSecrets?: readonly string[] | undefined;
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
  const journal = new JournalReads(ring, journalDir);
  const dryRuns = new DryRunPipelines();

  const hostSecrets = deps.hostSecrets ?? [];
  /**
   * The hook token, every signing secret and verify token of the config in force, and the host's own secrets: never
   * shown, wherever they turn up.
   */
  const secrets = (): string[] => {
    const prepared = deps.live()?.prepared;
    return prepared ? [...hookSecrets(prepared), ...hostSecrets] : [...hostSecrets];
  };

  return {
    journaling: journalDir !== undefined,

    async list(filter) {
      return scrubSecrets(await listRows(ring, journal, filter), secrets());
    },

    async detail(id) {
      return scrubSecrets(await detailFor(id, journal, deps), secrets());
    },

    async dryRun(id) {
      const live = deps.live();
      const stored = await journal.storedRequest(id);
      if (!live || !stored) return undefined;
      return scrubSecrets(await dryRunStored(dryRuns, live.prepared, stored), secrets());
    },

    async replay(id) {
      const live = deps.live();
      const stored = await journal.storedRequest(id);
      if (!live || !stored) return undefined;
      return scrubSecrets(await replayStored(live, dryRuns, stored), secrets());
    },

    async fixture(id) {
      const stored = await journal.storedRequest(id);
      if (!stored) return undefined;
      return scrubSecrets(fixtureText(stored), secrets());
    },

    close: () => dryRuns.close(),
  };
}

/** The newest rows that pass `filter`, from the ring, and from the journal for rows older than the ring holds. */
async function listRows(
  ring: SummaryRing,
  journal: JournalReads,
  filter: InspectorFilter,
): Promise<InspectorSummary[]> {
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
  if (before !== undefined && rows.length < limit && ring.full && journal.dir !== undefined) {
    const older = await journal.entriesBefore(Math.min(before, oldest ?? before), filter.hook);
    for (let i = older.length - 1; i >= 0 && rows.length < limit; i--) {
      const row = summaryOf(older[i]!);
      if (matchesFilter(row, filter)) rows.push(row);
    }
  }
  return rows;
}

/** A request's detail from its journal entry, or, when the journal lacks it, from its row in the ring. */
async function detailFor(
  id: string,
  journal: JournalReads,
  deps: JournalInspectorDeps,
): Promise<InspectorDetail | undefined> {
  const row = deps.ring.byKey(id) ?? deps.ring.byRequest(id);
  const entry = await journal.findEntry(id);
  const scheme = (hook: string) => deps.live()?.prepared.signedPaths.get(hook)?.settings.scheme;
  if (entry) return detailOf(entry, { scheme: scheme(entry.hook) }, row?.durationMs);
  if (!row) return undefined;
  const detail: InspectorDetail = {
    ...row,
    signed: scheme(row.hook) !== undefined,
    note:
      journal.dir === undefined
        ? "The journal is off (hooks.journal.enabled): only this summary is known."
        : "Not in the journal (yet, or no longer): only this summary is known.",
  };
  if (row.state === "refused" && row.code === undefined) detail.verification = `refused with ${row.status}`;
  return detail;
}

/** @module The delivery outbox in the state database: one row per run id, a repeated `delivery:send` ignored. */
import type { StateDb } from "./state-db.js";
import type { OutboxEntry } from "./state-records.js";

export interface Outbox {
  /** Whether a delivery of this run was already recorded (committed, or written this turn). */
  has(runId: string): boolean;
  append(entry: OutboxEntry): void;
}

interface OutboxParams {
  at: number;
  runId: string;
  requestId: string;
  hook: string;
  mappingId: string | null;
  requested: string;
  channel: string;
  to: string | null;
  text: string;
  status: string;
  reason: string | null;
}

export function createOutbox(state: StateDb): Outbox {
  const insert = state.db.prepare<[OutboxParams]>(
    `INSERT OR IGNORE INTO outbox (at, run_id, request_id, hook, mapping_id, requested, channel, recipient, text, status, reason)
     VALUES (@at, @runId, @requestId, @hook, @mappingId, @requested, @channel, @to, @text, @status, @reason)`,
  );
  const exists = state.db.prepare<[string], number>("SELECT 1 FROM outbox WHERE run_id = ?").pluck();
  // Run ids written this turn and not yet committed: the unique index only sees them after the commit.
  const unflushed = new Set<string>();
  state.onFlush(() => unflushed.clear());

  return {
    has: (runId) => unflushed.has(runId) || exists.get(runId) !== undefined,
    append(entry) {
      const params: OutboxParams = {
        at: Date.now(),
        runId: entry.runId,
        requestId: entry.requestId,
        hook: entry.hook,
        mappingId: entry.mappingId ?? null,
        requested: entry.requested,
        channel: entry.channel,
        to: entry.to ?? null,
        text: entry.text,
        status: entry.status,
        reason: entry.reason ?? null,
      };
      unflushed.add(entry.runId);
      state.write(() => insert.run(params));
    },
  };
}

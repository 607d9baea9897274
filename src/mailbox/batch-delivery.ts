/** @module Batching of new messages: fixed-size chunks, and halving a batch the hook found too large (413). */
import type { SendOutcome } from "./hook-poster.js";
import type { MailboxMessage } from "./message-extract.js";

/** Messages per POST: a burst becomes few agent-turn requests while a body stays far below the preset's limit. */
export const DEFAULT_BATCH_SIZE = 25;

export interface PendingMessage {
  uid: number;
  message: MailboxMessage;
}

export type BatchOutcome =
  | { kind: "delivered" }
  | { kind: "rejected"; status: number; reason: string; ids: string[] }
  | { kind: "stopped" };

export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1)
    throw new Error(`batch size must be a positive integer, got ${size}`);
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/**
 * Sends `entries` (ascending UIDs) as one POST. `commit(uid)` runs after every part the hook accepted, so
 * progress survives a crash between parts. A 413 means this body is over the hook's limit: the batch is halved
 * and each half sent in order, down to single messages; a single message still refused is a rejection.
 */
export async function deliverBatch(
  entries: readonly PendingMessage[],
  send: (messages: MailboxMessage[]) => Promise<SendOutcome>,
  commit: (uid: number) => Promise<void>,
): Promise<BatchOutcome> {
  const last = entries[entries.length - 1];
  if (last === undefined) return { kind: "delivered" };
  const outcome = await send(entries.map((entry) => entry.message));
  if (outcome.kind === "delivered") {
    await commit(last.uid);
    return outcome;
  }
  if (outcome.kind === "stopped") return outcome;
  if (outcome.status === 413 && entries.length > 1) {
    const middle = Math.ceil(entries.length / 2);
    const first = await deliverBatch(entries.slice(0, middle), send, commit);
    if (first.kind !== "delivered") return first;
    return deliverBatch(entries.slice(middle), send, commit);
  }
  return {
    kind: "rejected",
    status: outcome.status,
    reason: outcome.reason,
    ids: entries.map((entry) => entry.message.id),
  };
}

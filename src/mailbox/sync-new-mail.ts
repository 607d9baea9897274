/** @module One sync of an open mailbox: every message above the recorded UID goes to the hook, oldest first, batch by batch. */
import type { ImapFlow } from "imapflow";
import { chunk, deliverBatch, type PendingMessage } from "./batch-delivery.js";
import type { DeliveryState, DeliveryStateStore } from "./delivery-state.js";
import { describeBatch, type SendOutcome } from "./hook-poster.js";
import type { MailboxLogger } from "./logger.js";
import { extractMailboxMessage, type MailboxMessage, rawFetchLimit } from "./message-extract.js";
import type { MailboxRunSettings } from "./settings.js";
import { guard } from "./state-guard.js";

export interface SyncDeps {
  store: DeliveryStateStore;
  logger: MailboxLogger;
  /** The account the state belongs to, as `describeAccount` names it. */
  accountKey: string;
  batchSize: number;
  /** Posts one batch to the hook, retrying what can be retried. */
  send: (messages: readonly MailboxMessage[]) => Promise<SendOutcome>;
  signal: AbortSignal;
  /** What each message carries: `includeBody` and `maxBytes`. */
  settings: Pick<MailboxRunSettings, "includeBody" | "maxBytes">;
}

export type SyncResult =
  | { kind: "synced"; state: DeliveryState }
  | { kind: "stopped" }
  | { kind: "failed"; reason: string };

/** Delivers every message above `lastUid`, oldest first, batch by batch, recording progress after each 2xx. */
export async function syncNewMail(
  client: ImapFlow,
  initial: DeliveryState,
  deps: SyncDeps,
): Promise<SyncResult> {
  const { store, logger, accountKey } = deps;
  let state = initial;
  const found = await client.search({ uid: `${state.lastUid + 1}:*` }, { uid: true });
  // `N:*` also matches the highest UID when it is below N, hence the filter.
  const uids = (found || []).filter((uid) => uid > state.lastUid).sort((a, b) => a - b);
  if (uids.length === 0) return { kind: "synced", state };
  const backlog = uids.length > deps.batchSize;
  if (backlog) logger.info(`catching up: 0/${uids.length}`);
  let done = 0;
  const commit = async (uid: number) => {
    if (uid <= state.lastUid) return;
    state = await guard(() =>
      store.save({ account: accountKey, uidValidity: state.uidValidity, lastUid: uid }),
    );
  };
  for (const part of chunk(uids, deps.batchSize)) {
    if (deps.signal.aborted) return { kind: "stopped" };
    const entries = await fetchMessages(client, part, state.uidValidity, deps.settings);
    const outcome = await deliverBatch(entries, deps.send, commit);
    if (outcome.kind === "stopped") return outcome;
    if (outcome.kind === "rejected")
      return { kind: "failed", reason: refusalReason(outcome.ids, outcome.reason) };
    // Messages expunged between SEARCH and FETCH leave gaps; the whole part is done either way.
    const last = part[part.length - 1];
    if (last !== undefined) await commit(last);
    done += part.length;
    if (backlog) logger.info(`catching up: ${done}/${uids.length}`);
    else logger.info(`delivered ${describeBatch(entries.map((entry) => entry.message))}`);
  }
  return { kind: "synced", state };
}

/** Why the helper stops after the hook refused messages for good; it names them by id only. */
function refusalReason(ids: readonly string[], reason: string): string {
  const refused =
    ids.length === 1 ? `message ${ids[0]}` : `${ids.length} messages (${ids[0]} … ${ids[ids.length - 1]})`;
  return `the hook refused ${refused} with ${reason}. Repeating the request cannot succeed, so the helper stops without recording it as delivered; fix the cause (token, hooks.enabled, the "mailbox" preset, body limits) and start it again to deliver from there`;
}

async function fetchMessages(
  client: ImapFlow,
  uids: number[],
  uidValidity: number,
  settings: SyncDeps["settings"],
): Promise<PendingMessage[]> {
  const fetched = await client.fetchAll(
    uids.join(","),
    { uid: true, source: { maxLength: rawFetchLimit(settings.maxBytes) } },
    { uid: true },
  );
  const entries: PendingMessage[] = [];
  for (const item of fetched.sort((a, b) => a.uid - b.uid)) {
    if (item.source === undefined) continue;
    const message = await extractMailboxMessage(
      { uid: item.uid, uidValidity, source: item.source },
      { includeBody: settings.includeBody, maxBytes: settings.maxBytes },
    );
    entries.push({ uid: item.uid, message });
  }
  return entries;
}

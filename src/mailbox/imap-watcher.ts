/** @module `hooks mailbox run`'s engine: watches one mailbox over IMAP and delivers each new message to the hook exactly once. */
import type { ImapFlow } from "imapflow";
import { type BackoffPolicy, createBackoff, DEFAULT_BACKOFF, sleep } from "./backoff.js";
import { chunk, DEFAULT_BATCH_SIZE, deliverBatch, type PendingMessage } from "./batch-delivery.js";
import type { DeliveryState, DeliveryStateStore } from "./delivery-state.js";
import { createRetryingSender, describeBatch, type FetchLike, postToHook } from "./hook-poster.js";
import {
  type ConnectTimeouts,
  describeImapError,
  isAuthenticationFailure,
  type MailboxSnapshot,
  type OpenSession,
  openMailboxSession,
} from "./imap-connect.js";
import type { MailboxLogger } from "./logger.js";
import { extractMailboxMessage, rawFetchLimit } from "./message-extract.js";
import { describeAccount, type MailboxRunSettings, readPassword } from "./settings.js";
import { createWakeLatch, type WakeLatch } from "./wake-latch.js";

export interface MailboxWatcherOptions {
  settings: MailboxRunSettings;
  store: DeliveryStateStore;
  logger: MailboxLogger;
  /** First run without state: deliver the mail already in the mailbox instead of starting at UIDNEXT. */
  backlog?: boolean;
  /** Deliver what is new, then return instead of waiting for more. */
  once?: boolean;
  batchSize?: number;
  /** Pause after a new-mail notification so that a burst arriving together goes out as one batch. */
  settleMs?: number;
  /** Waits between hook retries (network errors, 408, 429, 5xx). */
  retryBackoff?: BackoffPolicy;
  /** Waits between IMAP reconnect attempts. */
  reconnectBackoff?: BackoffPolicy;
  requestTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  fetch?: FetchLike;
  imapTimeouts?: ConnectTimeouts;
}

export type WatcherResult = { ok: true } | { ok: false; reason: string };

export interface MailboxWatcher {
  run(): Promise<WatcherResult>;
  /** Ends `run` soon: waits are cut short, a hook request already sent is let finish and recorded. */
  stop(): void;
}

type SessionEnd =
  | { kind: "stopped" }
  | { kind: "done" }
  | { kind: "reopen" }
  | { kind: "failed"; reason: string };

/** A problem that reconnecting cannot fix (the state file cannot be written, the hook refuses for good). */
class FatalError extends Error {}

export function createMailboxWatcher(options: MailboxWatcherOptions): MailboxWatcher {
  const { settings, store, logger } = options;
  const account = settings.account;
  const accountKey = describeAccount(account);
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const settleMs = options.settleMs ?? 250;
  const pollMs = settings.pollSeconds * 1000;
  const abort = new AbortController();
  const signal = abort.signal;
  const reconnectBackoff = createBackoff(options.reconnectBackoff ?? DEFAULT_BACKOFF);
  const retryPolicy = options.retryBackoff ?? DEFAULT_BACKOFF;
  const timeouts: ConnectTimeouts = {
    // The server's IDLE keep-alives and the poll timer both keep the socket busier than this.
    socketTimeoutMs: Math.max(5 * 60_000, pollMs + 60_000),
    ...options.imapTimeouts,
  };
  const target = {
    url: settings.hookUrl,
    token: settings.token,
    timeoutMs: options.requestTimeoutMs ?? 30_000,
  };
  const send = createRetryingSender({
    post: (messages) => postToHook(target, messages, options.fetch),
    backoff: createBackoff(retryPolicy),
    maxDelayMs: retryPolicy.maxMs,
    logger,
    signal,
  });
  let latch: WakeLatch | undefined;

  async function run(): Promise<WatcherResult> {
    let connectedOnce = false;
    logger.info(`starting: mailbox ${accountKey}, hook ${redactUrl(settings.hookUrl)}, state ${store.file}`);
    while (!signal.aborted) {
      let password: string;
      try {
        password = await readPassword(account.password, options.env);
      } catch (error) {
        return fail((error as Error).message);
      }
      let session: OpenSession;
      try {
        session = await openMailboxSession(account, password, timeouts);
      } catch (error) {
        const reason = describeImapError(error, account);
        // Wrong credentials or a missing mailbox at start are configuration mistakes: say so and stop. Once the
        // helper has worked, the same answers can be a server hiccup, so it keeps trying.
        if (!connectedOnce && (isAuthenticationFailure(error) || isMailboxError(error))) return fail(reason);
        // A one-shot run (cron) reports instead of waiting for the server to come back.
        if (options.once) return fail(reason);
        await pause(reason);
        continue;
      }
      connectedOnce = true;
      let end: SessionEnd | undefined;
      try {
        end = await watchSession(session);
      } catch (error) {
        if (error instanceof FatalError) return fail(error.message);
        if (options.once && !signal.aborted)
          return fail(`connection lost: ${describeImapError(error, account)}`);
        if (!signal.aborted)
          await pause(
            `connection to ${account.host}:${account.port} lost: ${describeImapError(error, account)}`,
          );
      } finally {
        await closeSession(session.client);
      }
      if (end?.kind === "failed") return fail(end.reason);
      if (end?.kind === "done") break;
      // "reopen" goes straight round the loop: the new session's reconcile handles the new UIDVALIDITY.
    }
    logger.info(options.once ? "done: everything new was delivered" : "stopped");
    return { ok: true };
  }

  function fail(reason: string): WatcherResult {
    logger.error(reason);
    return { ok: false, reason };
  }

  async function pause(reason: string): Promise<void> {
    const delay = reconnectBackoff.next();
    logger.warn(
      `${reason}; reconnecting in ${(delay / 1000).toFixed(1)} s (attempt ${reconnectBackoff.attempts})`,
    );
    await sleep(delay, signal);
  }

  async function watchSession({ client, mailbox }: OpenSession): Promise<SessionEnd> {
    const wake = createWakeLatch();
    latch = wake;
    if (signal.aborted) return { kind: "stopped" };
    client.on("exists", () => wake.notify("exists"));
    client.on("close", () => wake.notify("closed"));
    let state = await reconcileState(mailbox);
    logger.info(
      `connected to ${account.host}:${account.port}; watching "${account.mailbox}" from UID ${state.lastUid + 1} (UIDVALIDITY ${state.uidValidity})`,
    );
    for (;;) {
      const synced = await syncNewMail(client, state);
      if (synced.kind !== "synced") return synced;
      state = synced.state;
      // A session that got this far is healthy; the next outage starts again with short waits.
      reconnectBackoff.reset();
      if (options.once) return { kind: "done" };
      if (!client.usable) throw new Error("the server closed the connection");
      // IDLE makes the server push EXISTS as mail arrives; the next command (a poll or a sync) ends it.
      client.idle().catch(() => undefined);
      const reason = await wake.wait(pollMs);
      if (reason === "stopped") return { kind: "stopped" };
      if (reason === "closed") throw new Error("the server closed the connection");
      if (reason === "exists" && settleMs > 0) await sleep(settleMs, signal);
      if (reason === "poll" && (await mailboxWasReplaced(client, state))) {
        logger.warn(`"${account.mailbox}" was deleted and recreated on the server; opening it again`);
        return { kind: "reopen" };
      }
      // "poll": nothing was pushed in pollSeconds; the search in the next sync asks the server directly, which
      // also covers servers without IDLE and IDLE sessions a middlebox silently dropped.
    }
  }

  /**
   * A session can keep showing the mailbox it selected after that mailbox was deleted and a new one created under
   * the same name, without a word from the server (dovecot does, even to STATUS). Selecting the name again on
   * every poll looks it up afresh; it costs one command per poll interval.
   */
  async function mailboxWasReplaced(client: ImapFlow, state: DeliveryState): Promise<boolean> {
    const reopened = await client.mailboxOpen(account.mailbox, { readOnly: true });
    return Number(reopened.uidValidity) !== state.uidValidity;
  }

  /** Decides where delivery starts: saved state, or the mailbox's current end for a first run or a new UIDVALIDITY. */
  async function reconcileState(mailbox: MailboxSnapshot): Promise<DeliveryState> {
    const saved = await guard(() => store.load());
    const startAtEnd = (lastUid: number) =>
      guard(() => store.save({ account: accountKey, uidValidity: mailbox.uidValidity, lastUid }));
    const endUid = Math.max(0, mailbox.uidNext - 1);
    if (saved === undefined) {
      if (options.backlog) {
        logger.info(
          `first run with --backlog: delivering the ${mailbox.exists} message(s) already in the mailbox`,
        );
        return startAtEnd(0);
      }
      logger.info(
        `first run: starting at UID ${mailbox.uidNext}; the ${mailbox.exists} message(s) already in the mailbox are not sent (use --backlog to send them)`,
      );
      return startAtEnd(endUid);
    }
    if (options.backlog)
      logger.info(`--backlog has no effect: ${store.file} exists, delivery resumes from it`);
    if (saved.account !== accountKey) {
      logger.warn(
        `the state file was written for ${saved.account}, not ${accountKey}: starting fresh at UID ${mailbox.uidNext}`,
      );
      return startAtEnd(endUid);
    }
    if (saved.uidValidity !== mailbox.uidValidity) {
      logger.warn(
        `UIDVALIDITY of "${account.mailbox}" changed from ${saved.uidValidity} to ${mailbox.uidValidity} (the server rebuilt or recreated the mailbox); old UIDs mean nothing now, so delivery resumes at the current end (UID ${mailbox.uidNext}) without resending old mail`,
      );
      return startAtEnd(endUid);
    }
    return saved;
  }

  type SyncResult = { kind: "synced"; state: DeliveryState } | SessionEnd;

  /** Delivers every message above `lastUid`, oldest first, batch by batch, recording progress after each 2xx. */
  async function syncNewMail(client: ImapFlow, initial: DeliveryState): Promise<SyncResult> {
    let state = initial;
    const found = await client.search({ uid: `${state.lastUid + 1}:*` }, { uid: true });
    // `N:*` also matches the highest UID when it is below N, hence the filter.
    const uids = (found || []).filter((uid) => uid > state.lastUid).sort((a, b) => a - b);
    if (uids.length === 0) return { kind: "synced", state };
    const backlog = uids.length > batchSize;
    if (backlog) logger.info(`catching up: 0/${uids.length}`);
    let done = 0;
    const commit = async (uid: number) => {
      if (uid <= state.lastUid) return;
      state = await guard(() =>
        store.save({ account: accountKey, uidValidity: state.uidValidity, lastUid: uid }),
      );
    };
    for (const part of chunk(uids, batchSize)) {
      if (signal.aborted) return { kind: "stopped" };
      const entries = await fetchMessages(client, part, state.uidValidity);
      const outcome = await deliverBatch(entries, send, commit);
      if (outcome.kind === "stopped") return outcome;
      if (outcome.kind === "rejected") {
        return {
          kind: "failed",
          reason: `the hook refused ${outcome.ids.length === 1 ? `message ${outcome.ids[0]}` : `${outcome.ids.length} messages (${outcome.ids[0]} … ${outcome.ids[outcome.ids.length - 1]})`} with ${outcome.reason}. Repeating the request cannot succeed, so the helper stops without recording it as delivered; fix the cause (token, hooks.enabled, the "mailbox" preset, body limits) and start it again to deliver from there`,
        };
      }
      // Messages expunged between SEARCH and FETCH leave gaps; the whole part is done either way.
      const last = part[part.length - 1];
      if (last !== undefined) await commit(last);
      done += part.length;
      if (backlog) logger.info(`catching up: ${done}/${uids.length}`);
      else logger.info(`delivered ${describeBatch(entries.map((entry) => entry.message))}`);
    }
    return { kind: "synced", state };
  }

  async function fetchMessages(
    client: ImapFlow,
    uids: number[],
    uidValidity: number,
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

  return {
    run,
    stop() {
      if (signal.aborted) return;
      abort.abort();
      latch?.notify("stopped");
    },
  };
}

/** State I/O failures are fatal: delivering on without recording would resend everything after a restart. */
async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new FatalError(`delivery state: ${(error as Error).message}`);
  }
}

function isMailboxError(error: unknown): boolean {
  const command = (error as { executedCommand?: unknown } | undefined)?.executedCommand;
  return typeof command === "string" && /^\S+ (SELECT|EXAMINE) /i.test(command);
}

async function closeSession(client: ImapFlow): Promise<void> {
  if (client.usable) {
    await Promise.race([client.logout().catch(() => undefined), sleep(2_000)]);
  }
  client.close();
}

/** Hook URLs may carry a `?token=`; logs show scheme, host and path only. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

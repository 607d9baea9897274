/** @module `hooks mailbox run`'s engine: watches one mailbox over IMAP and delivers each new message to the hook exactly once. */
import type { ImapFlow } from "imapflow";
import { type Backoff, type BackoffPolicy, createBackoff, DEFAULT_BACKOFF, sleep } from "./backoff.js";
import { DEFAULT_BATCH_SIZE } from "./batch-delivery.js";
import type { DeliveryState, DeliveryStateStore } from "./delivery-state.js";
import { createRetryingSender, type FetchLike, postToHook } from "./hook-poster.js";
import {
  type ConnectTimeouts,
  describeImapError,
  isAuthenticationFailure,
  type OpenSession,
  openMailboxSession,
} from "./imap-connect.js";
import type { MailboxLogger } from "./logger.js";
import { type ReconcileDeps, reconcileState } from "./reconcile-state.js";
import { describeAccount, type ImapAccount, type MailboxRunSettings, readPassword } from "./settings.js";
import { FatalError } from "./state-guard.js";
import { type SyncDeps, syncNewMail } from "./sync-new-mail.js";
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

/** What opening a session came to: a session, a reason to give up, or a wait already taken before trying again. */
type Connection =
  | { kind: "open"; session: OpenSession }
  | { kind: "failed"; reason: string }
  | { kind: "retry" };

/** Everything one watcher's run works with, worked out once from its options. */
interface Watch {
  options: MailboxWatcherOptions;
  account: ImapAccount;
  logger: MailboxLogger;
  signal: AbortSignal;
  pollMs: number;
  settleMs: number;
  timeouts: ConnectTimeouts;
  reconnectBackoff: Backoff;
  /** What deciding where delivery starts needs: the state store, the account, `backlog`. */
  reconcile: ReconcileDeps;
  /** What a sync needs: the state store, the hook sender, the batch size. */
  sync: SyncDeps;
  /** The current session's latch, woken by `stop`. */
  latch: WakeLatch | undefined;
}

export function createMailboxWatcher(options: MailboxWatcherOptions): MailboxWatcher {
  const abort = new AbortController();
  const watch = prepareWatch(options, abort.signal);
  return {
    run: () => runWatch(watch),
    stop() {
      if (abort.signal.aborted) return;
      abort.abort();
      watch.latch?.notify("stopped");
    },
  };
}

function prepareWatch(options: MailboxWatcherOptions, signal: AbortSignal): Watch {
  const { settings, store, logger } = options;
  const accountKey = describeAccount(settings.account);
  const pollMs = settings.pollSeconds * 1000;
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
  return {
    options,
    account: settings.account,
    logger,
    signal,
    pollMs,
    settleMs: options.settleMs ?? 250,
    timeouts,
    reconnectBackoff,
    reconcile: { store, logger, accountKey, mailboxName: settings.account.mailbox, backlog: options.backlog },
    sync: {
      store,
      logger,
      accountKey,
      batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
      send,
      signal,
      settings,
    },
    latch: undefined,
  };
}

/** Connects, watches, and reconnects after an outage, until stopped, done (`once`) or failed for good. */
async function runWatch(watch: Watch): Promise<WatcherResult> {
  const { options, logger, signal } = watch;
  let connectedOnce = false;
  logger.info(
    `starting: mailbox ${watch.sync.accountKey}, hook ${redactUrl(options.settings.hookUrl)}, state ${options.store.file}`,
  );
  while (!signal.aborted) {
    const connection = await connect(watch, connectedOnce);
    if (connection.kind === "failed") return fail(logger, connection.reason);
    if (connection.kind === "retry") continue;
    connectedOnce = true;
    const end = await watchUntilClosed(watch, connection.session);
    if (end?.kind === "failed") return fail(logger, end.reason);
    if (end?.kind === "done") break;
    // "reopen" goes straight round the loop: the new session's reconcile handles the new UIDVALIDITY.
  }
  logger.info(options.once ? "done: everything new was delivered" : "stopped");
  return { ok: true };
}

async function connect(watch: Watch, connectedOnce: boolean): Promise<Connection> {
  const { account, options } = watch;
  let password: string;
  try {
    password = await readPassword(account.password, options.env);
  } catch (error) {
    return { kind: "failed", reason: (error as Error).message };
  }
  try {
    return { kind: "open", session: await openMailboxSession(account, password, watch.timeouts) };
  } catch (error) {
    const reason = describeImapError(error, account);
    // Wrong credentials or a missing mailbox at start are configuration mistakes: say so and stop. Once the
    // helper has worked, the same answers can be a server hiccup, so it keeps trying.
    if (!connectedOnce && (isAuthenticationFailure(error) || isMailboxError(error))) {
      return { kind: "failed", reason };
    }
    // A one-shot run (cron) reports instead of waiting for the server to come back.
    if (options.once) return { kind: "failed", reason };
    await pauseBeforeReconnect(watch, reason);
    return { kind: "retry" };
  }
}

/**
 * Watches one open session and closes it whatever happens. A lost connection is waited out here (undefined: go
 * round again); a fatal error, or a lost connection in a one-shot run, ends as "failed".
 */
async function watchUntilClosed(watch: Watch, session: OpenSession): Promise<SessionEnd | undefined> {
  const { account, options, signal } = watch;
  try {
    return await watchSession(watch, session);
  } catch (error) {
    if (error instanceof FatalError) return { kind: "failed", reason: error.message };
    if (options.once && !signal.aborted) {
      return { kind: "failed", reason: `connection lost: ${describeImapError(error, account)}` };
    }
    if (!signal.aborted) {
      await pauseBeforeReconnect(
        watch,
        `connection to ${account.host}:${account.port} lost: ${describeImapError(error, account)}`,
      );
    }
    return undefined;
  } finally {
    await closeSession(session.client);
  }
}

function fail(logger: MailboxLogger, reason: string): WatcherResult {
  logger.error(reason);
  return { ok: false, reason };
}

async function pauseBeforeReconnect(watch: Watch, reason: string): Promise<void> {
  const { reconnectBackoff } = watch;
  const delay = reconnectBackoff.next();
  watch.logger.warn(
    `${reason}; reconnecting in ${(delay / 1000).toFixed(1)} s (attempt ${reconnectBackoff.attempts})`,
  );
  await sleep(delay, watch.signal);
}

async function watchSession(watch: Watch, { client, mailbox }: OpenSession): Promise<SessionEnd> {
  const { account, options, logger } = watch;
  const wake = createWakeLatch();
  watch.latch = wake;
  if (watch.signal.aborted) return { kind: "stopped" };
  client.on("exists", () => wake.notify("exists"));
  client.on("close", () => wake.notify("closed"));
  let state = await reconcileState(mailbox, watch.reconcile);
  logger.info(
    `connected to ${account.host}:${account.port}; watching "${account.mailbox}" from UID ${state.lastUid + 1} (UIDVALIDITY ${state.uidValidity})`,
  );
  for (;;) {
    const synced = await syncNewMail(client, state, watch.sync);
    if (synced.kind !== "synced") return synced;
    state = synced.state;
    // A session that got this far is healthy; the next outage starts again with short waits.
    watch.reconnectBackoff.reset();
    if (options.once) return { kind: "done" };
    const end = await waitForMail(watch, client, wake, state);
    if (end !== undefined) return end;
  }
}

/** Waits for the server's news, a stop or the poll timer; undefined means "sync again". */
async function waitForMail(
  watch: Watch,
  client: ImapFlow,
  wake: WakeLatch,
  state: DeliveryState,
): Promise<SessionEnd | undefined> {
  const { account } = watch;
  if (!client.usable) throw new Error("the server closed the connection");
  // IDLE makes the server push EXISTS as mail arrives; the next command (a poll or a sync) ends it.
  client.idle().catch(() => undefined);
  const reason = await wake.wait(watch.pollMs);
  if (reason === "stopped") return { kind: "stopped" };
  if (reason === "closed") throw new Error("the server closed the connection");
  if (reason === "exists" && watch.settleMs > 0) await sleep(watch.settleMs, watch.signal);
  if (reason === "poll" && (await mailboxWasReplaced(client, account.mailbox, state))) {
    watch.logger.warn(`"${account.mailbox}" was deleted and recreated on the server; opening it again`);
    return { kind: "reopen" };
  }
  // "poll": nothing was pushed in pollSeconds; the search in the next sync asks the server directly, which
  // also covers servers without IDLE and IDLE sessions a middlebox silently dropped.
  return undefined;
}

/**
 * A session can keep showing the mailbox it selected after that mailbox was deleted and a new one created under
 * the same name, without a word from the server (dovecot does, even to STATUS). Selecting the name again on
 * every poll looks it up afresh; it costs one command per poll interval.
 */
async function mailboxWasReplaced(client: ImapFlow, mailbox: string, state: DeliveryState): Promise<boolean> {
  const reopened = await client.mailboxOpen(mailbox, { readOnly: true });
  return Number(reopened.uidValidity) !== state.uidValidity;
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

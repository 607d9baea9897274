/** @module Where delivery starts in a newly opened mailbox: the saved state, or the mailbox's current end. */
import type { DeliveryState, DeliveryStateStore } from "./delivery-state.js";
import type { MailboxSnapshot } from "./imap-connect.js";
import type { MailboxLogger } from "./logger.js";
import { guard } from "./state-guard.js";

export interface ReconcileDeps {
  store: DeliveryStateStore;
  logger: MailboxLogger;
  /** The account the state belongs to, as `describeAccount` names it. */
  accountKey: string;
  /** The watched mailbox's name, for the log. */
  mailboxName: string;
  /** First run without state: deliver the mail already in the mailbox instead of starting at UIDNEXT. */
  backlog: boolean | undefined;
}

/** Decides where delivery starts: saved state, or the mailbox's current end for a first run or a new UIDVALIDITY. */
export async function reconcileState(mailbox: MailboxSnapshot, deps: ReconcileDeps): Promise<DeliveryState> {
  const { store, logger, accountKey } = deps;
  const saved = await guard(() => store.load());
  const startAtEnd = (lastUid: number) =>
    guard(() => store.save({ account: accountKey, uidValidity: mailbox.uidValidity, lastUid }));
  const endUid = Math.max(0, mailbox.uidNext - 1);
  if (saved === undefined) {
    if (deps.backlog) {
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
  if (deps.backlog) logger.info(`--backlog has no effect: ${store.file} exists, delivery resumes from it`);
  if (saved.account !== accountKey) {
    logger.warn(
      `the state file was written for ${saved.account}, not ${accountKey}: starting fresh at UID ${mailbox.uidNext}`,
    );
    return startAtEnd(endUid);
  }
  if (saved.uidValidity !== mailbox.uidValidity) {
    logger.warn(
      `UIDVALIDITY of "${deps.mailboxName}" changed from ${saved.uidValidity} to ${mailbox.uidValidity} (the server rebuilt or recreated the mailbox); old UIDs mean nothing now, so delivery resumes at the current end (UID ${mailbox.uidNext}) without resending old mail`,
    );
    return startAtEnd(endUid);
  }
  return saved;
}

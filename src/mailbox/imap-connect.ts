/** @module Opens an IMAP session on the configured mailbox with imapflow, and explains IMAP failures in one sentence. */
import { ImapFlow } from "imapflow";
import type { ImapAccount } from "./settings.js";

export interface MailboxSnapshot {
  uidValidity: number;
  uidNext: number;
  exists: number;
}

export interface OpenSession {
  client: ImapFlow;
  mailbox: MailboxSnapshot;
}

export interface ConnectTimeouts {
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  /** Inactivity after which the socket is considered dead; IDLE is renewed well before it. */
  socketTimeoutMs?: number;
}

export function createImapClient(
  account: ImapAccount,
  password: string,
  timeouts: ConnectTimeouts = {},
): ImapFlow {
  const client = new ImapFlow({
    host: account.host,
    port: account.port,
    secure: account.security === "tls",
    // `none` must never upgrade silently and `starttls` must never fall back to cleartext.
    ...(account.security === "tls" ? {} : { doSTARTTLS: account.security === "starttls" }),
    auth: { user: account.user, pass: password },
    // imapflow logs through pino by default, which would print protocol traffic; the helper logs for itself.
    logger: false,
    // The watcher starts IDLE itself when it has nothing else to do, so its own commands never wait for DONE.
    disableAutoIdle: true,
    ...(timeouts.connectionTimeoutMs === undefined
      ? {}
      : { connectionTimeout: timeouts.connectionTimeoutMs }),
    ...(timeouts.greetingTimeoutMs === undefined ? {} : { greetingTimeout: timeouts.greetingTimeoutMs }),
    ...(timeouts.socketTimeoutMs === undefined ? {} : { socketTimeout: timeouts.socketTimeoutMs }),
  });
  // Without a listener an 'error' event would crash the process; failures surface through rejected commands
  // and the 'close' event instead.
  client.on("error", () => undefined);
  return client;
}

/** Logs in and selects the mailbox; on failure the connection is closed and the error rethrown. */
export async function openMailboxSession(
  account: ImapAccount,
  password: string,
  timeouts: ConnectTimeouts = {},
): Promise<OpenSession> {
  const client = createImapClient(account, password, timeouts);
  try {
    await client.connect();
    const mailbox = await client.mailboxOpen(account.mailbox, { readOnly: true });
    return {
      client,
      mailbox: { uidValidity: Number(mailbox.uidValidity), uidNext: mailbox.uidNext, exists: mailbox.exists },
    };
  } catch (error) {
    client.close();
    throw error;
  }
}

interface ImapErrorFields {
  code?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
  responseText?: string;
  executedCommand?: string;
}

export function isAuthenticationFailure(error: unknown): boolean {
  return (error as ImapErrorFields | undefined)?.authenticationFailed === true;
}

/** One sentence for a person; the server's own words are included, the credentials never are. */
export function describeImapError(error: unknown, account: ImapAccount): string {
  const fields = (error ?? {}) as ImapErrorFields & Error;
  const where = `${account.host}:${account.port}`;
  if (fields.authenticationFailed) {
    const said = fields.responseText ? ` (server said: ${fields.responseText})` : "";
    return `the IMAP server ${where} refused the login for ${account.user}: check the user name and password${said}`;
  }
  if (typeof fields.executedCommand === "string" && /^\S+ (SELECT|EXAMINE) /i.test(fields.executedCommand)) {
    return `cannot open mailbox "${account.mailbox}" on ${where}: ${fields.responseText ?? fields.message}`;
  }
  const code = fields.code;
  if (code === "ECONNREFUSED")
    return `cannot connect to ${where}: connection refused (is the host and port right?)`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `cannot resolve the IMAP host ${account.host} (${code})`;
  if (code === "ETIMEDOUT" || code === "CONNECT_TIMEOUT" || code === "GREETING_TIMEOUT") {
    return `no answer from ${where} in time (${code})`;
  }
  if (typeof code === "string" && /SSL|TLS|CERT|EPROTO/i.test(code)) {
    return `TLS failed with ${where} (${code}): check --tls / --starttls / --no-tls against what the server offers`;
  }
  if (fields.responseText) return `IMAP error from ${where}: ${fields.responseText}`;
  if (code) return `IMAP error with ${where}: ${fields.message} (${code})`;
  return fields.message ?? String(error);
}

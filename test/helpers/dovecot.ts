/** @module Test harness: a throwaway dovecot IMAP server in a temp dir (start, stop, restart, users, APPEND, UIDVALIDITY change). */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ImapFlow } from "imapflow";
import { freePort } from "../../scripts/openclaw-launch.mjs";
import { DOVECOT, findBinary, skipReason } from "./test-servers.js";

export interface DovecotInstallation {
  binary: string;
  /** e.g. `2.3.19.1`. */
  version: string;
}

/** Finds the `dovecot` binary (it lives in sbin, which is often not on a normal user's PATH) and its version. */
export function findDovecot(): DovecotInstallation | undefined {
  const binary = findBinary(DOVECOT.binary);
  if (binary === undefined) return undefined;
  try {
    const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim().split(/\s+/)[0] ?? "";
    return { binary, version };
  } catch {
    return undefined;
  }
}

/**
 * Whether the dovecot suites run. Locally a missing dovecot skips them with the returned reason; in CI
 * (`CI` set) they always run, so a missing dovecot fails loudly instead of passing silently.
 */
export function dovecotSkipReason(): string | undefined {
  return skipReason(DOVECOT);
}

export interface TestMail {
  from?: string;
  to?: string;
  subject: string;
  text?: string;
  html?: string;
}

export interface DovecotServer {
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  addUser(user: string, password: string): Promise<void>;
  /** APPENDs each message (one IMAP session) and returns their UIDs; creates `mailbox` when missing. */
  append(user: string, mailbox: string, mails: readonly TestMail[]): Promise<number[]>;
  /** Deletes and recreates `mailbox` (not INBOX, which IMAP cannot delete): the new one has a new UIDVALIDITY. */
  recreateMailbox(user: string, mailbox: string): Promise<number>;
  status(user: string, mailbox: string): Promise<{ uidValidity: number; uidNext: number; messages: number }>;
  stop(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
  log(): string;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  // Last resort when a test run dies without its afterAll: never leave a dovecot behind.
  for (const child of live) killGroup(child, "SIGKILL");
});

export async function startDovecot(): Promise<DovecotServer> {
  const installation = findDovecot();
  if (installation === undefined) throw new Error(dovecotSkipReason() ?? "dovecot is not installed");
  const dir = await mkdtemp(path.join(os.tmpdir(), "hooks-dovecot-"));
  // Mail processes run as an unprivileged user and must reach their maildir below this directory.
  await chmod(dir, 0o755);
  const users = identities();
  const mailDir = path.join(dir, "mail");
  await mkdir(mailDir);
  await mkdir(path.join(dir, "run"));
  await mkdir(path.join(dir, "state"));
  if (users.root) await chown(mailDir, users.mailUid, users.mailGid);
  // One passwd-file per user: dovecot looks at a passwd-file at most once a second, so a user added to a
  // shared file right after another lookup would be unknown for up to a second.
  const usersDir = path.join(dir, "users");
  await mkdir(usersDir, { mode: 0o755 });
  const port = await freePort();
  const configFile = path.join(dir, "dovecot.conf");
  const render =
    installation.version.localeCompare("2.4", undefined, { numeric: true }) >= 0 ? config24 : config23;
  await writeFile(configFile, render({ dir, port, usersDir, mailDir, users }));

  const passwords = new Map<string, string>();
  let child: ChildProcess | undefined;
  let output = "";

  const server: DovecotServer = {
    host: "127.0.0.1",
    port,
    dir,
    async addUser(user, password) {
      passwords.set(user, password);
      if (!/^[a-z0-9._-]+$/i.test(user)) throw new Error(`test user names are plain words, got ${user}`);
      await writeFile(path.join(usersDir, user), `${user}:{PLAIN}${password}::::::\n`, { mode: 0o644 });
    },
    async append(user, mailbox, mails) {
      return withClient(port, user, passwordOf(user), async (client) => {
        if (mailbox !== "INBOX") await ensureMailbox(client, mailbox);
        const uids: number[] = [];
        for (const mail of mails) {
          const result = await client.append(mailbox, buildMail(mail));
          if (!result || result.uid === undefined)
            throw new Error("APPEND returned no UID (UIDPLUS missing?)");
          uids.push(result.uid);
        }
        return uids;
      });
    },
    async recreateMailbox(user, mailbox) {
      if (mailbox.toUpperCase() === "INBOX")
        throw new Error("INBOX cannot be deleted over IMAP; use another mailbox");
      return withClient(port, user, passwordOf(user), async (client) => {
        await client.mailboxDelete(mailbox).catch(() => undefined);
        await client.mailboxCreate(mailbox);
        const status = await client.status(mailbox, { uidValidity: true });
        return Number(status.uidValidity);
      });
    },
    async status(user, mailbox) {
      return withClient(port, user, passwordOf(user), async (client) => {
        const status = await client.status(mailbox, { uidValidity: true, uidNext: true, messages: true });
        return {
          uidValidity: Number(status.uidValidity),
          uidNext: status.uidNext ?? 0,
          messages: status.messages ?? 0,
        };
      });
    },
    async start() {
      if (child !== undefined) return;
      const started = spawn(installation.binary, ["-F", "-c", configFile], {
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      started.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      started.stderr?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      live.add(started);
      started.once("exit", () => live.delete(started));
      child = started;
      try {
        await waitUntilReady(port, started, () => server.log());
      } catch (error) {
        await server.stop();
        throw error;
      }
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
      killGroup(running, "SIGTERM");
      const timer = setTimeout(() => killGroup(running, "SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
      // The master is gone; make sure no login or imap process of the group outlives it.
      killGroup(running, "SIGKILL");
    },
    async restart() {
      await server.stop();
      await server.start();
    },
    async close() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
    log() {
      const file = path.join(dir, "dovecot.log");
      const text = existsSync(file) ? readFileSync(file, "utf8") : "";
      return `${output}${text}`.split("\n").slice(-40).join("\n");
    },
  };

  function passwordOf(user: string): string {
    const password = passwords.get(user);
    if (password === undefined) throw new Error(`unknown test user ${user}; call addUser first`);
    return password;
  }

  try {
    await server.start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return server;
}

/** A minimal RFC 822 message; bodies are base64 so any UTF-8 text survives. */
export function buildMail(mail: TestMail): string {
  const headers = [
    `From: ${encodeHeader(mail.from ?? "Sender <sender@example.org>")}`,
    `To: ${mail.to ?? "owner@example.org"}`,
    `Subject: ${encodeHeader(mail.subject)}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}@hooks.test>`,
    "MIME-Version: 1.0",
  ];
  const part = (type: string, content: string) =>
    [
      `Content-Type: ${type}; charset=utf-8`,
      "Content-Transfer-Encoding: base64",
      "",
      wrap(Buffer.from(content, "utf8").toString("base64")),
    ].join("\r\n");
  if (mail.html !== undefined && mail.text !== undefined) {
    const boundary = "b-hooks-test";
    return [
      ...headers,
      `Content-Type: multipart/alternative; boundary="${boundary}"`,
      "",
      `--${boundary}`,
      part("text/plain", mail.text),
      `--${boundary}`,
      part("text/html", mail.html),
      `--${boundary}--`,
      "",
    ].join("\r\n");
  }
  const html = mail.html !== undefined;
  return [...headers, part(html ? "text/html" : "text/plain", mail.html ?? mail.text ?? ""), ""].join("\r\n");
}

function encodeHeader(value: string): string {
  return /^[\x00-\x7f]*$/.test(value)
    ? value
    : `=?UTF-8?B?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

function wrap(base64: string): string {
  return base64.replace(/.{1,76}/g, "$&\r\n").trimEnd();
}

async function withClient<T>(
  port: number,
  user: string,
  password: string,
  work: (client: ImapFlow) => Promise<T>,
): Promise<T> {
  const client = new ImapFlow({
    host: "127.0.0.1",
    port,
    secure: false,
    doSTARTTLS: false,
    auth: { user, pass: password },
    logger: false,
    disableAutoIdle: true,
  });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function ensureMailbox(client: ImapFlow, mailbox: string): Promise<void> {
  const list = await client.list();
  if (!list.some((entry) => entry.path === mailbox)) await client.mailboxCreate(mailbox);
}

interface Identities {
  root: boolean;
  loginUser: string;
  internalUser: string;
  mailUid: number;
  mailGid: number;
}

/** dovecot refuses to run login processes as root: as root use the package's users and `nobody` for mail. */
function identities(): Identities {
  if (process.getuid?.() === 0) {
    const nobody = lookupUser("nobody");
    return {
      root: true,
      loginUser: "dovenull",
      internalUser: "dovecot",
      mailUid: nobody.uid,
      mailGid: nobody.gid,
    };
  }
  const me = os.userInfo();
  return { root: false, loginUser: me.username, internalUser: me.username, mailUid: me.uid, mailGid: me.gid };
}

function lookupUser(name: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${name}:`));
  const fields = line?.split(":") ?? [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error(`user ${name} not found in /etc/passwd`);
  return { uid, gid };
}

interface ConfigInput {
  dir: string;
  port: number;
  usersDir: string;
  mailDir: string;
  users: Identities;
}

/** Without root nothing may chroot; with it the package defaults are kept. */
function chrootOverrides(users: Identities): string {
  if (users.root) return "";
  return ["service anvil {\n  chroot =\n}", "service imap-login {\n  chroot =\n}"].join("\n");
}

function commonSettings({ dir, users }: ConfigInput): string {
  return `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
auth_mechanisms = plain login
# Tests try wrong passwords on purpose. (dovecot also delays the next login from the same address for a few
# seconds after a failure; no setting turns that off, so suites put their wrong-password test last.)
auth_failure_delay = 0
default_login_user = ${users.loginUser}
default_internal_user = ${users.internalUser}
first_valid_uid = ${Math.min(users.mailUid, 1)}
first_valid_gid = ${Math.min(users.mailGid, 1)}
# dovecot's processes report to stats; keep its sockets writable by the unprivileged mail user.
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
${chrootOverrides(users)}
`;
}

function config23(input: ConfigInput): string {
  const { port, usersDir, mailDir, users } = input;
  return `${commonSettings(input)}
disable_plaintext_auth = no
mail_location = maildir:${mailDir}/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${usersDir}/%u
}
userdb {
  driver = static
  args = uid=${users.mailUid} gid=${users.mailGid} home=${mailDir}/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`;
}

/** dovecot 2.4 renamed most settings and requires the version header first. */
function config24(input: ConfigInput): string {
  const { port, usersDir, mailDir, users } = input;
  return `dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0
${commonSettings(input)}
auth_allow_cleartext = yes
mail_driver = maildir
mail_home = ${mailDir}/%{user}
mail_path = ${mailDir}/%{user}
mail_uid = ${users.mailUid}
mail_gid = ${users.mailGid}
namespace inbox {
  inbox = yes
  separator = /
}
passdb passwd-file {
  passwd_file_path = ${usersDir}/%{user}
}
userdb static {
  fields {
    uid = ${users.mailUid}
    gid = ${users.mailGid}
    home = ${mailDir}/%{user}
  }
}
service imap-login {
  inet_listener imap {
    listen = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`;
}

/** Nothing announces readiness except the greeting, so poll the port briefly until dovecot greets. */
async function waitUntilReady(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`dovecot exited during start-up (${child.exitCode ?? child.signalCode}):\n${log()}`);
    }
    if (await greets(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`dovecot did not greet on port ${port} within 15 s:\n${log()}`);
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.on("error", () => finish(false));
    socket.on("data", (chunk) => {
      data += chunk.toString();
      if (/^\* OK .*ready/m.test(data)) finish(true);
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** @module `hooks mailbox run` against a real dovecot and a real HTTP hook receiver: delivery, batching, retries, restarts. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BackoffPolicy } from "../../src/mailbox/backoff.js";
import { createDeliveryStateStore } from "../../src/mailbox/delivery-state.js";
import { createMailboxWatcher, type WatcherResult } from "../../src/mailbox/imap-watcher.js";
import type { MailboxLogger } from "../../src/mailbox/logger.js";
import { type MailboxMessage, MailboxPayloadSchema } from "../../src/mailbox/message-extract.js";
import type { MailboxRunSettings } from "../../src/mailbox/settings.js";
import { type DovecotServer, dovecotSkipReason, startDovecot, type TestMail } from "../helpers/dovecot.js";
import { REPO_ROOT } from "../helpers/repo.js";

const TOKEN = "test-hook-token-0123456789abcdefghij";
const PASSWORD_ENV = "MAILBOX_TEST_PASSWORD";
/** Every piece of message content in these tests carries this marker, so the log check can find leaks. */
const CONTENT = "CONTENT-MARKER";
const FAST: BackoffPolicy = { initialMs: 20, maxMs: 200, factor: 2, jitter: 0 };

const skipReason = dovecotSkipReason();

/** Resolves when `check` holds, re-checked whenever `onChange` fires; fails with `what` after the deadline. */
function until(
  onChange: Set<() => void>,
  check: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const listener = () => {
      if (!check()) return;
      clearTimeout(timer);
      onChange.delete(listener);
      resolve();
    };
    const timer = setTimeout(() => {
      onChange.delete(listener);
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    onChange.add(listener);
  });
}

type Behaviour = "accept" | "stall" | number;

interface HookReceiver {
  url: string;
  /** Messages of every request answered 2xx, in arrival order. */
  accepted: MailboxMessage[];
  /** Sizes of every authorised request, whatever the answer. */
  requestSizes: number[];
  unauthorised: number;
  stalled: number;
  /** Answers for the next requests, in order; when empty, requests are accepted. */
  behaviours: Behaviour[];
  releaseStalled(): void;
  waitFor(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A stand-in for the gateway: checks the bearer token and the body shape, and records what it accepted. */
async function startReceiver(): Promise<HookReceiver> {
  const changes = new Set<() => void>();
  const changed = () => {
    for (const listener of [...changes]) listener();
  };
  const held: Array<{ res: http.ServerResponse; messages: MailboxMessage[]; aborted: boolean }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        receiver.unauthorised += 1;
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: "Missing or wrong token.", code: "UNAUTHORIZED" }));
        changed();
        return;
      }
      const parsed = v.safeParse(MailboxPayloadSchema, JSON.parse(body));
      if (!parsed.success) {
        res
          .writeHead(400)
          .end(JSON.stringify({ ok: false, error: v.summarize(parsed.issues), code: "INVALID_PAYLOAD" }));
        changed();
        return;
      }
      const messages = parsed.output.messages;
      receiver.requestSizes.push(messages.length);
      const behaviour = receiver.behaviours.shift() ?? "accept";
      if (behaviour === "accept") {
        receiver.accepted.push(...messages);
        res.writeHead(202, { "content-type": "application/json" }).end('{"ok":true}');
      } else if (behaviour === "stall") {
        receiver.stalled += 1;
        const entry = { res, messages, aborted: false };
        // Closing before an answer was written means the sender went away (or gave up) mid-request.
        res.once("close", () => {
          entry.aborted = !res.writableEnded;
        });
        held.push(entry);
      } else {
        res
          .writeHead(behaviour, { "content-type": "application/json" })
          .end('{"ok":false,"code":"INTERNAL"}');
      }
      changed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiver: HookReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mailbox`,
    accepted: [],
    requestSizes: [],
    unauthorised: 0,
    stalled: 0,
    behaviours: [],
    releaseStalled() {
      for (const { res, messages, aborted } of held.splice(0)) {
        // A request whose sender died is not delivered: only a 2xx that reached the sender counts.
        if (aborted || res.destroyed) continue;
        receiver.accepted.push(...messages);
        res.writeHead(202).end('{"ok":true}');
      }
      changed();
    },
    waitFor: (check, what, timeoutMs) => until(changes, check, what, timeoutMs),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return receiver;
}

interface RecordingLogger extends MailboxLogger {
  lines: string[];
  waitFor(pattern: RegExp, what?: string, count?: number): Promise<void>;
}

function createRecordingLogger(): RecordingLogger {
  const lines: string[] = [];
  const changes = new Set<() => void>();
  const push = (level: string) => (message: string) => {
    lines.push(`${level}: ${message}`);
    if (process.env.DEBUG_MAILBOX) console.log(new Date().toISOString(), level, message);
    for (const listener of [...changes]) listener();
  };
  return {
    lines,
    info: push("info"),
    warn: push("warn"),
    error: push("error"),
    waitFor: (pattern, what = String(pattern), count = 1) =>
      until(changes, () => lines.filter((line) => pattern.test(line)).length >= count, `log line ${what}`),
  };
}

const mail = (n: number, extra: Partial<TestMail> = {}): TestMail => ({
  from: `Sender ${n} ${CONTENT} <sender${n}@example.org>`,
  subject: `${CONTENT} subject ${n}`,
  text: `${CONTENT} text of message ${n}. `.repeat(20),
  ...extra,
});
const mails = (from: number, count: number) => Array.from({ length: count }, (_, i) => mail(from + i));

const idsOf = (messages: readonly MailboxMessage[]) => messages.map((message) => message.id);

describe.skipIf(skipReason !== undefined)(
  `hooks mailbox run against dovecot${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let server: DovecotServer;
    let receiver: HookReceiver;
    let workDir: string;
    let userCount = 0;
    const cleanups: Array<() => Promise<unknown>> = [];
    const secrets: string[] = [TOKEN, "Bearer"];

    beforeAll(async () => {
      server = await startDovecot();
      workDir = await mkdtemp(path.join(os.tmpdir(), "hooks-mailbox-run-"));
    });
    afterAll(async () => {
      await server?.close();
      if (workDir) await rm(workDir, { recursive: true, force: true });
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** A fresh user (own INBOX) and a fresh receiver per test, so tests cannot see each other's mail. */
    async function newAccount() {
      userCount += 1;
      const user = `user${userCount}`;
      const password = `pw-${userCount}-${Math.random().toString(36).slice(2)}`;
      secrets.push(password);
      await server.addUser(user, password);
      receiver = await startReceiver();
      const current = receiver;
      cleanups.push(() => current.close());
      return { user, password, stateDir: path.join(workDir, user) };
    }

    interface WatcherRun {
      stop(): Promise<WatcherResult>;
      done: Promise<WatcherResult>;
      logger: RecordingLogger;
    }

    function startWatcher(
      account: { user: string; password: string; stateDir: string },
      overrides: Partial<MailboxRunSettings> & { backlog?: boolean; once?: boolean; mailbox?: string } = {},
    ): WatcherRun {
      const { backlog, once, mailbox = "INBOX", ...settingsOverrides } = overrides;
      const logger = createRecordingLogger();
      const settings: MailboxRunSettings = {
        account: {
          host: server.host,
          port: server.port,
          security: "none",
          user: account.user,
          password: { kind: "env", name: PASSWORD_ENV },
          mailbox,
        },
        hookUrl: receiver.url,
        token: TOKEN,
        includeBody: false,
        maxBytes: 20_000,
        // Long enough that prompt delivery proves IDLE pushed the new mail, not a poll.
        pollSeconds: 30,
        ...settingsOverrides,
      };
      const watcher = createMailboxWatcher({
        settings,
        store: createDeliveryStateStore(account.stateDir),
        logger,
        backlog: backlog === true,
        once: once === true,
        env: { [PASSWORD_ENV]: account.password },
        retryBackoff: FAST,
        reconnectBackoff: FAST,
      });
      const done = watcher.run();
      const run: WatcherRun = {
        done,
        logger,
        async stop() {
          watcher.stop();
          return done;
        },
      };
      cleanups.push(async () => {
        await run.stop();
        expectNoLeaks(logger.lines);
      });
      return run;
    }

    function expectNoLeaks(lines: readonly string[]) {
      const text = lines.join("\n");
      expect(text).not.toContain(CONTENT);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }

    const readState = async (stateDir: string) =>
      JSON.parse(await readFile(path.join(stateDir, "mailbox.json"), "utf8")) as {
        uidValidity: number;
        lastUid: number;
      };

    it("delivers new mail as one hook call in the mailbox shape, and not the mail that was there before", async () => {
      const account = await newAccount();
      await server.append(account.user, "INBOX", [mail(0)]);
      const run = startWatcher(account, { includeBody: true, maxBytes: 60 });
      await run.logger.waitFor(/watching "INBOX" from UID 2/);

      await server.append(account.user, "INBOX", [
        mail(1, {
          from: `Ann ${CONTENT} <ann@example.org>`,
          subject: `Lunch? ${CONTENT}`,
          text: `${CONTENT} `.repeat(40),
        }),
      ]);
      await receiver.waitFor(() => receiver.accepted.length >= 1, "one delivered message");

      const { uidValidity } = await server.status(account.user, "INBOX");
      expect(receiver.requestSizes).toEqual([1]);
      expect(receiver.unauthorised).toBe(0);
      const [message] = receiver.accepted;
      expect(message).toEqual({
        id: `${uidValidity}-2`,
        from: `Ann ${CONTENT} <ann@example.org>`,
        subject: `Lunch? ${CONTENT}`,
        snippet: expect.stringMatching(new RegExp(`^${CONTENT} ${CONTENT}`)),
        body: expect.any(String),
      });
      expect(Buffer.byteLength(message?.body ?? "", "utf8")).toBeLessThanOrEqual(60);
      expect(Array.from(message?.snippet ?? "").length).toBeLessThanOrEqual(201);
      await run.logger.waitFor(/delivered message/);
      expect(await readState(account.stateDir)).toMatchObject({ uidValidity, lastUid: 2 });
    });

    it("with --backlog on the first run delivers the mail already there; --once then exits", async () => {
      const account = await newAccount();
      await server.append(account.user, "INBOX", mails(1, 3));
      const run = startWatcher(account, { backlog: true, once: true });
      expect(await run.done).toEqual({ ok: true });
      expect(idsOf(receiver.accepted).map((id) => id.split("-")[1])).toEqual(["1", "2", "3"]);
      expect(receiver.accepted.every((message) => message.body === undefined)).toBe(true);
    });

    it("batches a burst of 50 messages and delivers each exactly once, in order", async () => {
      const account = await newAccount();
      const run = startWatcher(account);
      await run.logger.waitFor(/watching "INBOX"/);
      // Hold the first POST until the whole burst is in the mailbox, so the rest must go out in batches.
      receiver.behaviours.push("stall");
      const appended = server.append(account.user, "INBOX", mails(1, 50));
      await receiver.waitFor(() => receiver.stalled === 1, "the first POST");
      await appended;
      receiver.releaseStalled();
      await receiver.waitFor(() => receiver.accepted.length >= 50, "50 delivered messages");

      const { uidValidity } = await server.status(account.user, "INBOX");
      expect(idsOf(receiver.accepted)).toEqual(
        Array.from({ length: 50 }, (_, i) => `${uidValidity}-${i + 1}`),
      );
      expect(Math.max(...receiver.requestSizes)).toBeLessThanOrEqual(25);
      expect(receiver.requestSizes.length).toBeLessThanOrEqual(3);
      expect(receiver.requestSizes.reduce((a, b) => a + b, 0)).toBe(50);
    });

    it("retries after a 500 and delivers the message once", async () => {
      const account = await newAccount();
      const run = startWatcher(account);
      await run.logger.waitFor(/watching "INBOX"/);
      receiver.behaviours.push(500);
      await server.append(account.user, "INBOX", [mail(1)]);
      await receiver.waitFor(() => receiver.accepted.length >= 1, "the retried message");

      expect(receiver.requestSizes).toEqual([1, 1]);
      expect(receiver.accepted).toHaveLength(1);
      expect(run.logger.lines.some((line) => /failed \(HTTP 500 INTERNAL\); retry 1 in/.test(line))).toBe(
        true,
      );
      await run.logger.waitFor(/delivered message/);
      expect((await readState(account.stateDir)).lastUid).toBe(1);
    });

    it("stops with a clear error when the hook refuses for good (401), and delivers after a fix", async () => {
      const account = await newAccount();
      const wrong = startWatcher(account, { token: "wrong-token" });
      await wrong.logger.waitFor(/watching "INBOX"/);
      await server.append(account.user, "INBOX", [mail(1)]);
      const result = await wrong.done;
      expect(result.ok).toBe(false);
      expect(result.ok ? "" : result.reason).toMatch(
        /the hook refused message \d+-1 with HTTP 401 UNAUTHORIZED: Missing or wrong token\..*stops without recording/,
      );
      expect(receiver.unauthorised).toBe(1);
      expect((await readState(account.stateDir)).lastUid).toBe(0);

      startWatcher(account);
      await receiver.waitFor(() => receiver.accepted.length === 1, "the message after the fix");
      expect(idsOf(receiver.accepted)[0]).toMatch(/-1$/);
    });

    it("reconnects after the IMAP server restarts and delivers mail appended after it", async () => {
      const account = await newAccount();
      const run = startWatcher(account);
      await run.logger.waitFor(/watching "INBOX"/);
      await server.append(account.user, "INBOX", [mail(1)]);
      await receiver.waitFor(() => receiver.accepted.length === 1, "the message before the restart");

      await server.restart();
      await run.logger.waitFor(/lost/, "connection lost");
      await run.logger.waitFor(/watching "INBOX" from UID 2/, "the reconnect");
      await server.append(account.user, "INBOX", [mail(2)]);
      await receiver.waitFor(() => receiver.accepted.length === 2, "the message after the restart");
      expect(idsOf(receiver.accepted).map((id) => id.split("-")[1])).toEqual(["1", "2"]);
    });

    it("resyncs on a UIDVALIDITY change without resending old mail", async () => {
      const account = await newAccount();
      const box = "Projects";
      await server.append(account.user, box, [mail(1)]);
      const first = startWatcher(account, { mailbox: box });
      await first.logger.waitFor(/watching "Projects"/);
      await server.append(account.user, box, [mail(2)]);
      await receiver.waitFor(() => receiver.accepted.length === 1, "the first new message");
      await first.stop();
      const before = await readState(account.stateDir);

      // The server rebuilds the mailbox: same mail, new UIDs, new UIDVALIDITY.
      const uidValidity = await server.recreateMailbox(account.user, box);
      expect(uidValidity).not.toBe(before.uidValidity);
      await server.append(account.user, box, [mail(1), mail(2)]);

      const second = startWatcher(account, { mailbox: box });
      await second.logger.waitFor(/UIDVALIDITY of "Projects" changed/);
      await second.logger.waitFor(/watching "Projects" from UID 3/);
      await server.append(account.user, box, [mail(3)]);
      await receiver.waitFor(() => receiver.accepted.length === 2, "the message after the resync");
      expect(idsOf(receiver.accepted)).toEqual([`${before.uidValidity}-2`, `${uidValidity}-3`]);
      expect(receiver.accepted[1]?.subject).toBe(`${CONTENT} subject 3`);
    });

    it("notices a mailbox recreated while it watches, on the next poll", async () => {
      const account = await newAccount();
      const box = "Live";
      await server.append(account.user, box, [mail(1)]);
      const run = startWatcher(account, { mailbox: box, pollSeconds: 1 });
      await run.logger.waitFor(/watching "Live" from UID 2/);
      const uidValidity = await server.recreateMailbox(account.user, box);
      await run.logger.waitFor(/UIDVALIDITY of "Live" changed/);
      await run.logger.waitFor(new RegExp(`watching "Live" from UID 1 \\(UIDVALIDITY ${uidValidity}\\)`));
      await server.append(account.user, box, [mail(2)]);
      await receiver.waitFor(() => receiver.accepted.length === 1, "the message in the new mailbox");
      expect(idsOf(receiver.accepted)).toEqual([`${uidValidity}-1`]);
    });

    it("loses and duplicates nothing when the CLI is killed mid-backlog and restarted", async () => {
      const account = await newAccount();
      await server.append(account.user, "INBOX", mails(1, 60));
      const configFile = path.join(workDir, `${account.user}.json5`);
      await writeFile(
        configFile,
        JSON.stringify({
          hooks: {
            enabled: true,
            token: TOKEN,
            presets: ["mailbox"],
            mailbox: {
              host: server.host,
              port: server.port,
              user: account.user,
              passwordEnv: PASSWORD_ENV,
              security: "none",
              hookUrl: receiver.url,
            },
          },
        }),
      );
      const args = ["mailbox", "run", "--config", configFile, "--state-dir", account.stateDir];
      const env = { ...process.env, [PASSWORD_ENV]: account.password };

      receiver.behaviours.push("accept", "stall");
      const first = spawnCli([...args, "--backlog"], env);
      cleanups.push(() => first.kill("SIGKILL"));
      await receiver.waitFor(() => receiver.stalled === 1, "the second batch", 15_000);
      await first.waitFor(/catching up: 25\/60/);
      await first.kill("SIGKILL");
      expect((await readState(account.stateDir)).lastUid).toBe(25);
      receiver.releaseStalled();

      const second = spawnCli(args, env);
      cleanups.push(() => second.kill("SIGKILL"));
      await receiver.waitFor(() => receiver.accepted.length >= 60, "all 60 messages", 15_000);
      await second.waitFor(/catching up: 35\/35/);
      // A second helper on the same state directory would deliver everything twice: it must refuse to start.
      const intruder = spawnCli(args, env);
      expect(await intruder.exited).toEqual({ code: 1, signal: null });
      expect(intruder.output()).toMatch(/another "hooks mailbox run" \(pid \d+\) already uses/);
      const exit = await second.kill("SIGTERM");
      expect(exit).toEqual({ code: 0, signal: null });
      expect(second.output()).toMatch(/SIGTERM: stopping/);

      const { uidValidity } = await server.status(account.user, "INBOX");
      expect(idsOf(receiver.accepted)).toEqual(
        Array.from({ length: 60 }, (_, i) => `${uidValidity}-${i + 1}`),
      );
      expect(receiver.requestSizes).toEqual([25, 25, 25, 10]);
      expectNoLeaks([first.output(), second.output()]);
    });
  },
);

interface CliProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  waitFor(pattern: RegExp): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `node bin/hooks.js ...` (dist/ is built by the suite's global setup): a real process, killed by its pid. */
function spawnCli(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const entry = path.join(REPO_ROOT, "bin/hooks.js");
  const child = spawn(process.execPath, [entry, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const changes = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of [...changes]) listener();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    output: () => output,
    waitFor: (pattern) =>
      until(changes, () => pattern.test(output), `CLI output ${pattern}\n${output}`, 15_000),
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

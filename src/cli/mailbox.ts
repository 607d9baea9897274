/** @module `hooks mailbox setup` and `hooks mailbox run`: the mailbox preset's IMAP helper. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { formatIssue } from "../config/issues.js";
import { loadGatewayConfigFile } from "../config/load-file.js";
import { generateToken } from "../index.js";
import { type EditableConfig, readConfigForEdit, writeConfig } from "../mailbox/config-file-edit.js";
import { createDeliveryStateStore } from "../mailbox/delivery-state.js";
import { describeImapError, openMailboxSession } from "../mailbox/imap-connect.js";
import { createMailboxWatcher } from "../mailbox/imap-watcher.js";
import { createConsoleLogger } from "../mailbox/logger.js";
import {
  type ImapAccount,
  type ImapSecurity,
  readPassword,
  resolveMailboxSettings,
} from "../mailbox/settings.js";
import {
  applyMailboxSetup,
  type MailboxSetupInput,
  type MailboxSetupResult,
  SetupConfigError,
} from "../mailbox/setup-config.js";
import { acquireStateLock, type StateLock } from "../mailbox/state-lock.js";
import { type CliIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./cli-io.js";

const DEFAULT_CONFIG = "./gateway.json5";
const DEFAULT_STATE_DIR = "./.hooks-state";

interface SetupOptions {
  host: string;
  user: string;
  port?: number;
  passwordEnv?: string;
  passwordFile?: string;
  tls?: boolean;
  starttls?: boolean;
  mailbox?: string;
  hookUrl?: string;
  includeBody?: boolean;
  maxBytes?: number;
  pollSeconds?: number;
  config: string;
  verify: boolean;
}

interface RunOptions {
  config: string;
  stateDir: string;
  backlog?: boolean;
  once?: boolean;
}

export function registerMailboxCommand(program: Command, io: CliIo): void {
  const mailbox = program
    .command("mailbox")
    .description(
      "the mailbox preset's helper: watch an IMAP mailbox and post new mail to <hooks.path>/mailbox",
    );

  mailbox
    .command("setup")
    .description("write hooks.mailbox into the gateway config (never the password) and test the login")
    .requiredOption("--host <host>", "IMAP server host name")
    .option("--port <port>", "IMAP port (default 993 with --tls, 143 otherwise)", parseIntegerIn(1, 65_535))
    .requiredOption("--user <user>", "IMAP user name")
    .option("--password-env <name>", "name of the environment variable that holds the password")
    .option("--password-file <path>", "file that holds the password (stored relative to the config file)")
    .option("--tls", "TLS from the first byte, usually port 993 (default)")
    .option("--starttls", "plain connection upgraded with STARTTLS, usually port 143")
    .option("--no-tls", "no encryption at all: only for a server on this machine")
    .option("--mailbox <name>", 'mailbox to watch (default "INBOX")')
    .option("--hook-url <url>", "where to post (default: http://127.0.0.1:18789<hooks.path>/mailbox)")
    .option("--include-body", "send the plain-text body (cut to --max-bytes), not only a snippet")
    .option("--no-include-body", "send only sender, subject and snippet")
    .option(
      "--max-bytes <bytes>",
      "cap of each message body in bytes (default 20000)",
      parseIntegerIn(1, 33_554_432),
    )
    .option(
      "--poll-seconds <seconds>",
      "poll interval when IDLE is silent (default 60)",
      parseIntegerIn(1, 86_400),
    )
    .option("--config <file>", "gateway config file, created when missing", DEFAULT_CONFIG)
    .option("--no-verify", "write the config without logging in to the server first")
    .action(async (options: SetupOptions, command: Command) => {
      io.setExitCode(await runSetup(options, command, io));
    });

  mailbox
    .command("run")
    .description("watch the mailbox and deliver each new message to the hook exactly once")
    .option("--config <file>", "gateway config file", DEFAULT_CONFIG)
    .option("--state-dir <dir>", "directory of the delivery state (mailbox.json)", DEFAULT_STATE_DIR)
    .option(
      "--backlog",
      "first run only: also deliver the mail already in the mailbox (default: start at its end)",
    )
    .option("--once", "deliver what is new, then exit instead of waiting for more")
    .action(async (options: RunOptions) => {
      io.setExitCode(await runWatcher(options, io));
    });
}

async function runSetup(options: SetupOptions, command: Command, io: CliIo): Promise<number> {
  const usage = (message: string): never =>
    command.error(`error: ${message}`, { exitCode: EXIT_USAGE, code: "hooks.usage" });
  checkSetupOptions(options, usage);
  const print = (line = "") => io.stdout.write(`${line}\n`);
  const fail = (message: string) => {
    io.stderr.write(`hooks mailbox setup: ${message}\n`);
    return EXIT_FAILURE;
  };

  let edit: EditableConfig;
  try {
    edit = await readConfigForEdit(options.config);
  } catch (error) {
    return fail((error as Error).message);
  }
  const configDir = path.dirname(edit.file);
  let result: MailboxSetupResult;
  try {
    result = applyMailboxSetup(edit.config, setupInputFrom(options, configDir), generateToken);
  } catch (error) {
    if (error instanceof SetupConfigError) return usage(error.message);
    throw error;
  }

  const settings = resolveMailboxSettings(result.config, configDir, true);
  if (!settings.ok) {
    return fail(
      `the resulting config would not work:\n${settings.issues.map((i) => `  - ${formatIssue(i)}`).join("\n")}`,
    );
  }
  const account = settings.settings.account;
  if (options.verify) {
    const verified = await verifyLogin(account, io.env);
    if (!verified.ok) {
      return fail(
        `verification failed: ${verified.reason}\nNothing was written. Fix the problem, or pass --no-verify to write the config without testing the login.`,
      );
    }
    print(verified.summary);
  }

  try {
    await writeSetupConfig(edit, result, print);
  } catch (error) {
    return fail(`cannot write ${edit.file}: ${(error as Error).message}`);
  }
  for (const warning of await setupWarnings(account)) print(`Warning: ${warning}`);
  printNextSteps(options, account, print);
  return EXIT_OK;
}

/** Flags that contradict each other, or a hook URL that is not one, are usage errors. */
function checkSetupOptions(options: SetupOptions, usage: (message: string) => never): void {
  if (options.passwordEnv !== undefined && options.passwordFile !== undefined) {
    usage("use only one of --password-env and --password-file");
  }
  if ([options.tls === true, options.starttls === true, options.tls === false].filter(Boolean).length > 1) {
    usage("use only one of --tls, --starttls and --no-tls");
  }
  if (options.hookUrl !== undefined && !/^https?:\/\/[^/]/i.test(options.hookUrl)) {
    usage("--hook-url must be an http:// or https:// URL");
  }
}

function setupInputFrom(options: SetupOptions, configDir: string): MailboxSetupInput {
  return {
    host: options.host,
    user: options.user,
    port: options.port,
    passwordEnv: options.passwordEnv,
    // Stored relative to the config file, which is how `run` resolves it, whatever the current directory.
    passwordFile:
      options.passwordFile === undefined
        ? undefined
        : relativeTo(configDir, path.resolve(options.passwordFile)),
    security: securityFrom(options),
    mailbox: options.mailbox,
    hookUrl: options.hookUrl,
    includeBody: options.includeBody,
    maxBytes: options.maxBytes,
    pollSeconds: options.pollSeconds,
  };
}

/** Writes the new config and says what changed; throws when the file cannot be written. */
async function writeSetupConfig(
  edit: EditableConfig,
  result: MailboxSetupResult,
  print: (line?: string) => void,
): Promise<void> {
  const { backup } = await writeConfig(edit, result.config);
  print(edit.existing === undefined ? `Created ${edit.file}:` : `Updated ${edit.file}:`);
  for (const change of result.changes.length > 0 ? result.changes : ["no changes"]) print(`  ${change}`);
  if (backup !== undefined) {
    print(
      `Note: the file was rewritten as plain JSON5, so its comments and formatting were not kept; the previous version is ${backup}.`,
    );
  }
}

/** Where the helper finds the password, and how to start the gateway and the helper. */
function printNextSteps(options: SetupOptions, account: ImapAccount, print: (line?: string) => void): void {
  print(
    account.password.kind === "env"
      ? `The password is not stored: the helper reads it from $${account.password.name}.`
      : `The password is not stored: the helper reads it from ${account.password.path}.`,
  );
  const configArg = options.config === DEFAULT_CONFIG ? "" : ` --config ${options.config}`;
  print(
    `Next: start the gateway (hooks serve${configArg}), then the helper (hooks mailbox run${configArg}).`,
  );
}

async function runWatcher(options: RunOptions, io: CliIo): Promise<number> {
  const logger = createConsoleLogger(io.stdout, io.stderr);
  const loaded = loadGatewayConfigFile(options.config, io.env);
  if (loaded.issues.length > 0) {
    for (const issue of loaded.issues) logger.error(formatIssue(issue));
    return EXIT_FAILURE;
  }
  const resolved = resolveMailboxSettings(loaded.config, loaded.configDir);
  if (!resolved.ok) {
    logger.error(`${loaded.file} cannot be used:`);
    for (const issue of resolved.issues) logger.error(`  ${formatIssue(issue)}`);
    return EXIT_FAILURE;
  }
  for (const warning of resolved.warnings) logger.warn(warning);
  let lock: StateLock;
  try {
    lock = await acquireStateLock(options.stateDir);
  } catch (error) {
    logger.error((error as Error).message);
    return EXIT_FAILURE;
  }
  const watcher = createMailboxWatcher({
    settings: resolved.settings,
    store: createDeliveryStateStore(options.stateDir),
    logger,
    backlog: options.backlog === true,
    once: options.once === true,
    env: io.env,
  });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal means "now": the state on disk is consistent at any point, so exiting is safe.
      logger.warn(`${signal} again: exiting at once`);
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    logger.info(`${signal}: stopping (a request already sent to the hook is let finish)`);
    watcher.stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const result = await watcher.run();
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await lock.release();
  }
}

type VerifyResult = { ok: true; summary: string } | { ok: false; reason: string };

async function verifyLogin(account: ImapAccount, env: NodeJS.ProcessEnv): Promise<VerifyResult> {
  let password: string;
  try {
    password = await readPassword(account.password, env);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  try {
    const session = await openMailboxSession(account, password, {
      connectionTimeoutMs: 20_000,
      greetingTimeoutMs: 20_000,
    });
    await session.client.logout().catch(() => session.client.close());
    return {
      ok: true,
      summary: `Verified: logged in to ${account.host}:${account.port} as ${account.user} and opened "${account.mailbox}" (${session.mailbox.exists} ${session.mailbox.exists === 1 ? "message" : "messages"}).`,
    };
  } catch (error) {
    return { ok: false, reason: describeImapError(error, account) };
  }
}

async function setupWarnings(account: ImapAccount): Promise<string[]> {
  const warnings: string[] = [];
  if (account.security === "none" && !isLoopback(account.host)) {
    warnings.push(`--no-tls sends the password to ${account.host} unencrypted; prefer --tls or --starttls`);
  }
  if (account.password.kind === "file") {
    const mode = await stat(account.password.path).then(
      (info) => info.mode,
      () => undefined,
    );
    if (mode === undefined) warnings.push(`the password file ${account.password.path} does not exist yet`);
    else if ((mode & 0o077) !== 0) {
      warnings.push(`the password file ${account.password.path} is readable by others; chmod 600 it`);
    }
  }
  return warnings;
}

function securityFrom(options: SetupOptions): ImapSecurity | undefined {
  if (options.starttls === true) return "starttls";
  if (options.tls === false) return "none";
  if (options.tls === true) return "tls";
  return undefined;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

function relativeTo(dir: string, file: string): string {
  const relative = path.relative(dir, file);
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative;
}

function parseIntegerIn(min: number, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    }
    return number;
  };
}

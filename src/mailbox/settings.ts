/** @module Resolves what `hooks mailbox run` needs (IMAP account, password source, hook URL and token) from the gateway config. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ConfigIssue } from "../config/issues.js";
import { resolveHooksConfig } from "../config/resolve.js";
import type { MailboxConfig } from "../config/schema.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "../gateway/gateway-config.js";

export type ImapSecurity = MailboxConfig["security"];

export type PasswordSource = { kind: "env"; name: string } | { kind: "file"; path: string };

export interface ImapAccount {
  host: string;
  port: number;
  security: ImapSecurity;
  user: string;
  password: PasswordSource;
  mailbox: string;
}

export interface MailboxRunSettings {
  account: ImapAccount;
  hookUrl: string;
  /** `hooks.token`; never logged. */
  token: string;
  includeBody: boolean;
  maxBytes: number;
  pollSeconds: number;
}

export type SettingsResult =
  | { ok: true; settings: MailboxRunSettings; warnings: string[] }
  | { ok: false; issues: ConfigIssue[] };

export function defaultImapPort(security: ImapSecurity): number {
  return security === "tls" ? 993 : 143;
}

/** Identifies the mailbox a delivery state belongs to; contains no secret. */
export function describeAccount(account: ImapAccount): string {
  return `${account.user}@${account.host}:${account.port}/${account.mailbox}`;
}

/** `edited`: the config as `hooks mailbox setup` writes it, its `${VAR}` not read yet. */
export function resolveMailboxSettings(
  config: Record<string, unknown>,
  configDir: string,
  edited = false,
): SettingsResult {
  const resolved = resolveHooksConfig(config, { configDir, variablesUnread: edited });
  const hooks = resolved.config;
  if (hooks === undefined || resolved.issues.length > 0) return { ok: false, issues: resolved.issues };
  const mailbox = hooks.mailbox;
  if (mailbox === undefined) {
    return {
      ok: false,
      issues: [{ path: "hooks.mailbox", message: 'is not set; run "hooks mailbox setup" first' }],
    };
  }
  const issues: ConfigIssue[] = [];
  if (!mailbox.host) issues.push({ path: "hooks.mailbox.host", message: "is required" });
  if (!mailbox.user) issues.push({ path: "hooks.mailbox.user", message: "is required" });
  const password = resolvePasswordSource(mailbox, configDir, issues);
  if (hooks.token.trim() === "") {
    issues.push({
      path: "hooks.token",
      message: "is required: the helper authenticates to the hook with it",
    });
  }
  const origin = mailbox.hookUrl === undefined ? localGatewayOrigin(config["server"]) : undefined;
  const hookUrl = mailbox.hookUrl ?? `${origin}${hooks.path}/mailbox`;
  if (mailbox.hookUrl === undefined && origin === undefined) {
    issues.push({
      path: "hooks.mailbox.hookUrl",
      message: "is needed when server.port is 0: the gateway's port is not known in advance",
    });
  } else if (!isHttpUrl(hookUrl)) {
    issues.push({ path: "hooks.mailbox.hookUrl", message: "must be an http:// or https:// URL" });
  }
  if (issues.length > 0 || password === undefined) return { ok: false, issues };

  const warnings = [...resolved.warnings];
  if (mailbox.hookUrl === undefined && !hooks.enabled) {
    warnings.push("hooks.enabled is not true: the local gateway will not accept the helper's requests");
  }
  if (
    mailbox.hookUrl === undefined &&
    !hooks.presets.includes("mailbox") &&
    !hasMailboxMapping(hooks.mappings)
  ) {
    warnings.push('hooks.presets does not contain "mailbox": the gateway will answer 404 to the helper');
  }
  return {
    ok: true,
    warnings,
    settings: {
      account: {
        host: mailbox.host ?? "",
        port: mailbox.port ?? defaultImapPort(mailbox.security),
        security: mailbox.security,
        user: mailbox.user ?? "",
        password,
        mailbox: mailbox.mailbox,
      },
      hookUrl,
      token: hooks.token,
      includeBody: mailbox.includeBody,
      maxBytes: mailbox.maxBytes,
      pollSeconds: mailbox.pollSeconds,
    },
  };
}

function resolvePasswordSource(
  mailbox: MailboxConfig,
  configDir: string,
  issues: ConfigIssue[],
): PasswordSource | undefined {
  if (mailbox.passwordEnv !== undefined && mailbox.passwordFile !== undefined) {
    issues.push({ path: "hooks.mailbox", message: "set only one of passwordEnv and passwordFile" });
    return undefined;
  }
  if (mailbox.passwordEnv) return { kind: "env", name: mailbox.passwordEnv };
  if (mailbox.passwordFile) return { kind: "file", path: path.resolve(configDir, mailbox.passwordFile) };
  issues.push({
    path: "hooks.mailbox",
    message: "needs passwordEnv (name of an environment variable) or passwordFile (path of a file)",
  });
  return undefined;
}

/** Reads the IMAP password at the moment it is needed, so a rotated password file is picked up on reconnect. */
export async function readPassword(
  source: PasswordSource,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (source.kind === "env") {
    const value = env[source.name];
    if (value === undefined || value === "") {
      throw new Error(`environment variable ${source.name} (hooks.mailbox.passwordEnv) is not set or empty`);
    }
    return value;
  }
  let text: string;
  try {
    text = await readFile(source.path, "utf8");
  } catch (error) {
    throw new Error(
      `cannot read the password file ${source.path} (hooks.mailbox.passwordFile): ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  // Editors and `echo` add a final newline that is not part of the password.
  const password = text.replace(/\r?\n$/, "");
  if (password === "") throw new Error(`the password file ${source.path} is empty`);
  return password;
}

/**
 * Where `hooks serve` listens for this config (`server.host`/`server.port`, default 127.0.0.1:18789), as the
 * helper on the same machine reaches it; `undefined` when the port is chosen at start (0).
 */
export function localGatewayOrigin(server: unknown): string | undefined {
  const section = (typeof server === "object" && server !== null ? server : {}) as {
    host?: unknown;
    port?: unknown;
  };
  const port = typeof section.port === "number" ? section.port : DEFAULT_PORT;
  if (port === 0) return undefined;
  let host = typeof section.host === "string" && section.host !== "" ? section.host : DEFAULT_HOST;
  // A wildcard bind address is reachable through loopback.
  if (host === "0.0.0.0") host = "127.0.0.1";
  if (host === "::" || host === "[::]") host = "::1";
  if (host.includes(":") && !host.startsWith("[")) host = `[${host}]`;
  return `http://${host}:${port}`;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function hasMailboxMapping(
  mappings: ReadonlyArray<{ match?: { path?: string | undefined } | undefined }>,
): boolean {
  return mappings.some((mapping) => mapping.match?.path === "mailbox");
}

/** @module `hooks mailbox setup`'s edit of the gateway config: writes `hooks.mailbox`, enables the preset, lists what changed. */
import * as v from "valibot";
import { MailboxConfigSchema } from "../config/schema.js";
import { defaultImapPort, type ImapSecurity } from "./settings.js";

export interface MailboxSetupInput {
  host: string;
  user: string;
  port?: number | undefined;
  passwordEnv?: string | undefined;
  passwordFile?: string | undefined;
  security?: ImapSecurity | undefined;
  mailbox?: string | undefined;
  hookUrl?: string | undefined;
  includeBody?: boolean | undefined;
  maxBytes?: number | undefined;
  pollSeconds?: number | undefined;
}

export interface MailboxSetupResult {
  /** The whole gateway config with only `hooks.*` changed. */
  config: Record<string, unknown>;
  /** The `hooks.mailbox` object as written. */
  mailbox: Record<string, unknown>;
  /** One line per change, for a person; never contains the token. */
  changes: string[];
  tokenCreated: boolean;
}

/** A config that cannot be edited safely (for example `hooks` is not an object); nothing is written. */
export class SetupConfigError extends Error {}

type JsonObject = Record<string, unknown>;

/**
 * Applies the setup flags to a parsed config (parsed without `${VAR}` substitution, so such strings are kept as
 * written). Fields of an existing `hooks.mailbox` that no flag names (model, thinking, ...) are kept.
 */
export function applyMailboxSetup(
  original: JsonObject,
  input: MailboxSetupInput,
  createToken: () => string,
): MailboxSetupResult {
  const config = structuredClone(original);
  const hooksValue = config["hooks"] ?? {};
  if (!isObject(hooksValue)) throw new SetupConfigError("hooks must be an object in the existing config");
  const hooks: JsonObject = hooksValue;
  config["hooks"] = hooks;
  const previousMailbox = hooks["mailbox"] ?? {};
  if (!isObject(previousMailbox))
    throw new SetupConfigError("hooks.mailbox must be an object in the existing config");
  const changes: string[] = [];

  const security = input.security ?? (previousMailbox["security"] as ImapSecurity | undefined) ?? "tls";
  const mailbox: JsonObject = { ...previousMailbox };
  mailbox["host"] = input.host;
  // The port follows the security mode unless given, so switching --tls to --starttls does not keep 993.
  mailbox["port"] = input.port ?? defaultImapPort(security);
  mailbox["user"] = input.user;
  mailbox["security"] = security;
  if (input.passwordEnv !== undefined) {
    mailbox["passwordEnv"] = input.passwordEnv;
    delete mailbox["passwordFile"];
  } else if (input.passwordFile !== undefined) {
    mailbox["passwordFile"] = input.passwordFile;
    delete mailbox["passwordEnv"];
  }
  mailbox["mailbox"] = input.mailbox ?? previousMailbox["mailbox"] ?? "INBOX";
  if (input.hookUrl !== undefined) mailbox["hookUrl"] = input.hookUrl;
  mailbox["includeBody"] = input.includeBody ?? previousMailbox["includeBody"] ?? false;
  mailbox["maxBytes"] = input.maxBytes ?? previousMailbox["maxBytes"] ?? 20_000;
  if (input.pollSeconds !== undefined) mailbox["pollSeconds"] = input.pollSeconds;
  if (mailbox["passwordEnv"] === undefined && mailbox["passwordFile"] === undefined) {
    throw new SetupConfigError("one of --password-env or --password-file is required");
  }
  const checked = v.safeParse(MailboxConfigSchema, mailbox);
  if (!checked.success) {
    throw new SetupConfigError(`hooks.mailbox would be invalid: ${v.summarize(checked.issues)}`);
  }
  hooks["mailbox"] = mailbox;
  for (const key of new Set([...Object.keys(previousMailbox), ...Object.keys(mailbox)])) {
    const line = describeChange(`hooks.mailbox.${key}`, previousMailbox[key], mailbox[key]);
    if (line !== undefined) changes.push(line);
  }

  if (hooks["enabled"] !== true) {
    changes.push(describeChange("hooks.enabled", hooks["enabled"], true) ?? "");
    hooks["enabled"] = true;
  }

  const presets = hooks["presets"] ?? [];
  if (!Array.isArray(presets))
    throw new SetupConfigError("hooks.presets must be an array in the existing config");
  if (!presets.includes("mailbox")) {
    hooks["presets"] = [...presets, "mailbox"];
    changes.push('hooks.presets: added "mailbox"');
  }

  const token = hooks["token"];
  const tokenCreated = typeof token !== "string" || token.trim() === "";
  if (tokenCreated) {
    hooks["token"] = createToken();
    changes.push("hooks.token: created (32 random bytes, base64url; not shown: it stays in the config file)");
  }

  return { config, mailbox, changes, tokenCreated };
}

function describeChange(path: string, before: unknown, after: unknown): string | undefined {
  if (JSON.stringify(before) === JSON.stringify(after)) return undefined;
  if (after === undefined) return `${path}: removed (was ${JSON.stringify(before)})`;
  if (before === undefined) return `${path}: ${JSON.stringify(after)}`;
  return `${path}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

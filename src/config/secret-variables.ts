/** @module A `${VAR}` that a secret field reads may not stand in text the gateway renders or answers with. */
import { type ConfigIssue, joinPath } from "./issues.js";
import { TEMPLATE_FIELDS } from "./mapping-schema.js";
import { field, isPlainObject } from "./plain-object.js";

/** `${NAME}`, as the substitution reads it (`$${` is a literal `${`, not a variable). */
const VARIABLE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A mapping's fields that become text beside its templates (TEMPLATE_FIELDS): the answer to the sender. */
const RESPONSE_FIELDS = ["body", "contentType"] as const;

type Json = Record<string, unknown>;

function variablesOf(value: unknown): string[] {
  if (typeof value !== "string") return [];
  return [...value.matchAll(VARIABLE)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

/**
 * Each variable a secret holds, with the first field that says so: `${VAR}` or `{ env: "VAR" }` in a token, the
 * inspector's key, a signing secret or the store's URL (it may carry a password), and the variables that `*Env`
 * fields name for a password or an API key.
 */
function secretVariables(config: Json): Map<string, string> {
  const secrets = new Map<string, string>();
  const note = (name: string, at: string) => {
    if (!secrets.has(name)) secrets.set(name, at);
  };
  const named = (value: unknown, at: string) => {
    if (typeof value === "string" && value !== "") note(value, at);
  };
  // `{ env: "NAME" }` reads NAME whole: as much a secret's variable as the NAME of a `${NAME}`.
  const usedBy = (value: unknown, at: string) => {
    for (const name of variablesOf(value)) note(name, at);
    named(field(value, "env"), at);
  };
  const hooks = config.hooks;
  usedBy(field(hooks, "token"), "hooks.token");
  usedBy(field(field(config.gateway, "auth"), "token"), "gateway.auth.token");
  usedBy(field(config.server, "metricsToken"), "server.metricsToken");
  usedBy(field(field(config.server, "inspector"), "key"), "server.inspector.key");
  usedBy(field(field(hooks, "store"), "url"), "hooks.store.url");
  named(field(field(hooks, "mailbox"), "passwordEnv"), "hooks.mailbox.passwordEnv");
  named(field(config.runner, "apiKeyEnv"), "runner.apiKeyEnv");
  const mappings = field(hooks, "mappings");
  (Array.isArray(mappings) ? mappings : []).forEach((mapping, index) => {
    const verify = field(mapping, "verify");
    const at = joinPath("hooks.mappings", index, "verify");
    usedBy(field(verify, "secret"), `${at}.secret`);
    usedBy(field(verify, "verifyToken"), `${at}.verifyToken`);
    const secrets = field(verify, "secrets");
    if (Array.isArray(secrets)) {
      secrets.forEach((secret, i) => {
        usedBy(secret, joinPath(at, "secrets", i));
      });
    }
  });
  return secrets;
}

/**
 * Refuses a secret's variable in a mapping's rendered text (`messageTemplate`, `response.body`, …): the value
 * would be written into a message a model reads, a session key, or the answer any caller gets. Reads the config
 * before substitution, so the message names the variable and never its value.
 */
export function checkSecretVariables(config: Json): ConfigIssue[] {
  const secrets = secretVariables(config);
  if (secrets.size === 0) return [];
  const issues: ConfigIssue[] = [];
  const check = (value: unknown, at: string) => {
    for (const name of new Set(variablesOf(value))) {
      const secret = secrets.get(name);
      if (secret === undefined) continue;
      issues.push({
        path: at,
        message: `uses \${${name}}, which ${secret} uses for a secret: its value would be rendered into a message or an answer. Take the value from the request, or another variable`,
        inText: true,
      });
    }
  };
  // A transform worker's environment is an allow-list: naming a secret's variable there hands it to every module.
  const allowed = field(field(config.hooks, "transforms"), "env");
  if (Array.isArray(allowed)) {
    allowed.forEach((name, index) => {
      const secret = typeof name === "string" ? secrets.get(name) : undefined;
      if (secret === undefined) return;
      issues.push({
        path: joinPath("hooks.transforms.env", index),
        message: `names ${name}, which ${secret} uses for a secret: every transform worker would get it. Leave it out`,
        inText: true,
      });
    });
  }
  const mappings = field(config.hooks, "mappings");
  if (!Array.isArray(mappings)) return issues;
  mappings.forEach((mapping, index) => {
    if (!isPlainObject(mapping)) return;
    const at = joinPath("hooks.mappings", index);
    for (const name of TEMPLATE_FIELDS) check(mapping[name], joinPath(at, name));
    // Not a template, but text a model reads all the same.
    check(mapping.instructions, joinPath(at, "instructions"));
    const response = mapping.response;
    if (isPlainObject(response))
      for (const name of RESPONSE_FIELDS) check(response[name], joinPath(at, "response", name));
  });
  return issues;
}

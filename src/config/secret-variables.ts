/** @module A `${VAR}` that a secret field reads may not stand in text the gateway renders or answers with. */
import { type ConfigIssue, joinPath } from "./issues.js";
import { TEMPLATE_FIELDS } from "./mapping-schema.js";

/** `${NAME}`, as the substitution reads it (`$${` is a literal `${`, not a variable). */
const VARIABLE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A mapping's fields that become text: its templates, and the answer to the sender. */
const RENDERED_FIELDS = TEMPLATE_FIELDS;
const RESPONSE_FIELDS = ["body", "contentType"] as const;

type Json = Record<string, unknown>;

function object(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function variablesOf(value: unknown): string[] {
  if (typeof value !== "string") return [];
  return [...value.matchAll(VARIABLE)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

/**
 * Each variable a secret holds, with the first field that says so: `${VAR}` in a token, a signing secret or the
 * store's URL (it may carry a password), and the variables that `*Env` fields name for a password or an API key.
 */
function secretVariables(config: Json): Map<string, string> {
  const secrets = new Map<string, string>();
  const note = (name: string, at: string) => {
    if (!secrets.has(name)) secrets.set(name, at);
  };
  const usedBy = (value: unknown, at: string) => {
    for (const name of variablesOf(value)) note(name, at);
  };
  const named = (value: unknown, at: string) => {
    if (typeof value === "string" && value !== "") note(value, at);
  };
  const hooks = object(config.hooks);
  usedBy(hooks?.token, "hooks.token");
  usedBy(object(object(config.gateway)?.auth)?.token, "gateway.auth.token");
  usedBy(object(config.server)?.metricsToken, "server.metricsToken");
  usedBy(object(hooks?.store)?.url, "hooks.store.url");
  named(object(hooks?.mailbox)?.passwordEnv, "hooks.mailbox.passwordEnv");
  named(object(config.runner)?.apiKeyEnv, "runner.apiKeyEnv");
  const mappings = Array.isArray(hooks?.mappings) ? hooks.mappings : [];
  mappings.forEach((mapping, index) => {
    const verify = object(object(mapping)?.verify);
    const at = joinPath("hooks.mappings", index, "verify");
    usedBy(verify?.secret, `${at}.secret`);
    if (Array.isArray(verify?.secrets)) {
      verify.secrets.forEach((secret, i) => {
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
  const allowed = object(object(config.hooks)?.transforms)?.env;
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
  const mappings = object(config.hooks)?.mappings;
  if (!Array.isArray(mappings)) return issues;
  mappings.forEach((entry, index) => {
    const mapping = object(entry);
    if (!mapping) return;
    const at = joinPath("hooks.mappings", index);
    for (const field of RENDERED_FIELDS) check(mapping[field], joinPath(at, field));
    const response = object(mapping.response);
    if (response)
      for (const field of RESPONSE_FIELDS) check(response[field], joinPath(at, "response", field));
  });
  return issues;
}

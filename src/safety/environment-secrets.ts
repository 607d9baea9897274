/** @module Which environment variables hold a configured secret: what code beside the gateway can read of its environment (on Linux, through /proc). */

/**
 * The names of the variables of `env` whose value is one of `secrets`, sorted. Told by value, not by how the config
 * names them: a secret substituted by the host before the plugin saw it (`${VAR}` in OpenClaw's config), read with
 * `{ env }`, or exported beside a `{ file }` holding the same, is in the environment all the same.
 */
export function variablesHolding(secrets: Iterable<string>, env: NodeJS.ProcessEnv): string[] {
  const values = new Set([...secrets].filter((secret) => secret !== ""));
  if (values.size === 0) return [];
  const names: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && values.has(value)) names.push(name);
  }
  return names.sort();
}

/** The password of a URL (a Redis URL's), decoded: the text a `${VAR}` inside the URL was. */
export function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === "" ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

/**
 * The warning for a config that runs transforms beside secrets taken from the environment: it names the variables,
 * never their values.
 */
export function transformsBesideSecretsWarning(names: readonly string[]): string {
  return `transforms run beside secrets read from the environment (${names.join(", ")}): a transform, or a program it starts, can read the gateway's environment through /proc; give them as { file } to keep them out of every environment`;
}

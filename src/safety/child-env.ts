/** @module The environment a transform worker or a runner's child process sees: an allow-list of the host's. */

/**
 * What every worker and child gets of the host's environment, each only if set. The host's environment holds its
 * secrets (the hook token, signing secrets, the gateway token, API keys, the mailbox password): code that reads
 * untrusted payloads sees only these and the names its config adds on purpose.
 */
const BASE_ENV = ["PATH", "HOME", "LANG", "TZ"] as const;

/** A copy of the base names and `names` from `from`, each only if set: what the child sets stays its own. */
export function allowListedEnv(names: readonly string[], from: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...names]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

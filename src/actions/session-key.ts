/** @module Session-key policy: who may choose a key, which prefixes it needs, and the main session's protection. */

import { type Ids, randomIds } from "../clock.js";
import { HookError } from "../errors.js";

export interface SessionKeyPolicy {
  allowRequestSessionKey: boolean;
  /** Lower-cased prefixes; empty means no restriction. */
  allowedSessionKeyPrefixes: readonly string[];
  defaultSessionKey?: string | undefined;
  mainSessionKey: string;
}

/**
 * Who chose the key: `caller` covers request bodies, payload-derived templates and transforms;
 * `operator` is a fixed key written in the config, which only has to pass the prefixes.
 */
export type SessionKeyOrigin = "caller" | "operator";

const MAX_KEY_LENGTH = 256;

/** The session key an agent run uses, or a SESSION_KEY_NOT_ALLOWED error saying why not. */
export function resolveSessionKey(
  policy: SessionKeyPolicy,
  requested: string | undefined,
  origin: SessionKeyOrigin,
  ids: Ids = randomIds,
): string {
  if (requested === undefined) return policy.defaultSessionKey ?? `hook:${ids.uuid()}`;
  const refuse = (message: string) =>
    new HookError("SESSION_KEY_NOT_ALLOWED", message, { details: [{ path: "sessionKey", message }] });
  if (origin === "caller" && !policy.allowRequestSessionKey) {
    throw refuse("Choosing a session key is turned off here (hooks.allowRequestSessionKey is false).");
  }
  if (requested.length > MAX_KEY_LENGTH || /[\s\u0000-\u001f]/.test(requested)) {
    throw refuse(
      `A session key is at most ${MAX_KEY_LENGTH} characters with no spaces or control characters.`,
    );
  }
  const lowered = requested.toLowerCase();
  // `agent:<id>:…` names an agent's session: a caller picks an agent only through agentId, under its policy.
  if (origin === "caller" && lowered.startsWith("agent:")) {
    throw refuse("A session key may not name an agent (agent:…); send agentId instead.");
  }
  if (lowered === policy.mainSessionKey.toLowerCase()) {
    throw refuse("The main session cannot be targeted by a hook.");
  }
  const prefixes = policy.allowedSessionKeyPrefixes;
  if (prefixes.length > 0 && !prefixes.some((prefix) => lowered.startsWith(prefix))) {
    throw refuse(`The session key must start with one of: ${prefixes.join(", ")}.`);
  }
  return requested;
}

/** @module Whether a Redis server may evict keys on its own (its `maxmemory-policy`), and what a gateway says or does about it. */
import type { Redis } from "ioredis";
import { errorMessage } from "../errors.js";

/**
 * What the server's policy means for the gateway: nothing to say; a warning (a policy it could not read, or an
 * evicting one the operator allowed); or a refusal to start (an evicting one not allowed).
 */
export type PolicyVerdict = { ok: true } | { ok: true; warning: string } | { ok: false; refusal: string };

/**
 * Reads the server's `maxmemory-policy` and judges it. Every policy but `noeviction` may drop keys when memory is
 * full: `allkeys-*` any key, `volatile-*` keys with an expiry, which every delivery id has. A dropped id lets a copy
 * of its delivery through as new (this gateway answers the ids it keeps itself, not other gateways'), so an evicting
 * server is refused unless `allowEviction`. A server that does not answer `CONFIG GET` (many managed services
 * disable it) cannot be judged: a warning, not a refusal, or such services could not be used at all.
 */
export async function judgeEvictionPolicy(
  redis: Pick<Redis, "config">,
  where: string,
  allowEviction: boolean,
): Promise<PolicyVerdict> {
  let policy: unknown;
  try {
    const reply = await redis.config("GET", "maxmemory-policy");
    policy = Array.isArray(reply) ? reply[1] : undefined;
  } catch (error) {
    return { ok: true, warning: unreadable(where, errorMessage(error)) };
  }
  if (typeof policy !== "string") return { ok: true, warning: unreadable(where, "no answer") };
  if (policy === "noeviction") return { ok: true };
  const evicts = `shared store ${where} may evict keys when its memory is full (maxmemory-policy ${policy})`;
  if (allowEviction) {
    return {
      ok: true,
      warning: `${evicts}; allowed by hooks.store.allowEviction: a delivery id it evicts is still answered as a duplicate by the gateway that accepted it, but may be accepted again by another`,
    };
  }
  return { ok: false, refusal: `${evicts}: a delivery id it evicts could be accepted twice` };
}

/** What an operator does about an evicting server. */
export const EVICTION_FIX =
  "set maxmemory-policy noeviction on the server, or hooks.store.allowEviction: true";

function unreadable(where: string, why: string): string {
  return `could not read the maxmemory-policy of shared store ${where} (${why}): make sure it is noeviction, or a delivery id it evicts may be accepted twice`;
}

/** @module Which source addresses may reach each hook name (`allowFrom`): the lists of `/wake`, `/agent` and of every mapping that could claim a name, compiled with proxy-addr once per config. */
import proxyAddr from "proxy-addr";
import { expandAllowFrom } from "../config/allow-from.js";
import type { ResolvedHooksConfig } from "../config/resolve.js";
import type { CompiledMapping } from "../mapping/compile-mappings.js";
import { MappingIndex } from "../mapping/mapping-index.js";

/** Whether a client address (the exact one, not its /64) is on a hook's allow-list. */
export type AddressCheck = (address: string) => boolean;

/** The allow-list guarding a hook name, or undefined when any source may reach it. */
export type AllowLists = (hook: string) => AddressCheck | undefined;

/** What the lists are read from: a prepared config (`PreparedHooks`) has both. */
export interface AllowListSources {
  config: Pick<ResolvedHooksConfig, "limits" | "namedRanges">;
  mappings: readonly CompiledMapping[];
}

/**
 * The allow-lists of a prepared config, by hook name. `/wake` and `/agent` take their own list, else
 * `hooks.limits.default`'s. A mapped name is checked before its body is read, when the mapping that will own it is
 * not known yet: an address passes when ANY mapping that could claim the name (those on its `match.path`, and every
 * mapping without one) allows it, each with its own list or else the default's; one candidate with no list at all
 * lets any source in. A name nothing can claim takes the default's, so an address that is not allowed learns no
 * more about which names exist than it does from any other 403.
 *
 * Undefined when no hook has a list. Everything is compiled here, per path the config names: a request costs one map lookup, and no cache grows with
 * the names strangers send.
 */
export function createAllowLists(prepared: AllowListSources): AllowLists | undefined {
  const { config, mappings } = prepared;
  const fallback = config.limits.default.allowFrom;
  // Several paths often share one list (the default's, a sender's name): compiled once each.
  const compiled = new Map<string, AddressCheck>();
  const compile = (lists: ReadonlyArray<readonly string[] | undefined>): AddressCheck | undefined => {
    if (lists.some((list) => list === undefined)) return undefined;
    const entries = [
      ...new Set(lists.flatMap((list) => expandAllowFrom(list ?? [], config.namedRanges))),
    ].sort();
    const key = entries.join(" ");
    let check = compiled.get(key);
    if (check === undefined) {
      const trust = proxyAddr.compile(entries);
      // proxy-addr's trust function takes an address and its hop; a hop number plays no part in a list.
      check = (address) => trust(address, 0);
      compiled.set(key, check);
    }
    return check;
  };

  const wake = compile([config.limits.wake?.allowFrom ?? fallback]);
  const agent = compile([config.limits.agent?.allowFrom ?? fallback]);
  const unclaimed = compile([fallback]);
  // The same candidates the mapping engine's claim is made of, so the check and the claim never disagree.
  const index = new MappingIndex(mappings);
  const byPath = new Map<string, AddressCheck | undefined>();
  for (const { matchPath } of mappings) {
    if (matchPath === undefined || byPath.has(matchPath)) continue;
    byPath.set(matchPath, compile((index.candidates(matchPath) ?? []).map((mapping) => mapping.allowFrom)));
  }
  const pathless = mappings.filter((mapping) => mapping.matchPath === undefined);
  const anyOtherName =
    pathless.length > 0 ? compile(pathless.map((mapping) => mapping.allowFrom)) : unclaimed;

  // No hook has a list: the stage is left out of the request path altogether.
  if (compiled.size === 0) return undefined;
  return (hook) => {
    if (hook === "wake") return wake;
    if (hook === "agent") return agent;
    // The bare base path is claimed by nothing, even with mappings that claim every name.
    if (hook === "") return unclaimed;
    return byPath.has(hook) ? byPath.get(hook) : anyOtherName;
  };
}

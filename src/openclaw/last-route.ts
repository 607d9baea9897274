/** @module Channel `last` inside OpenClaw: the route the agent's main session last talked on, read from OpenClaw's session store. */
import { CHANNEL_IDS } from "../index.js";
import type { OpenClawDeliveryContext, OpenClawRuntime, OpenClawSessionEntry } from "./openclaw-api.js";

export interface ResolvedRoute {
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string | number;
}

export type LastRoute = { ok: true; route: ResolvedRoute } | { ok: false; reason: string };

export const NO_LAST_ROUTE =
  "no last route: the main session has not talked on a channel yet; name channel and to";

/**
 * OpenClaw writes targets as `<channel>:<id>` in places (`telegram:4242`); split that form when the prefix is the
 * route's channel or, with none given, a channel id, so `to` is what the channel's adapter takes.
 */
export function splitTarget(channel: string | undefined, to: string): { channel?: string; to: string } {
  const colon = to.indexOf(":");
  if (colon > 0) {
    const prefix = to.slice(0, colon).toLowerCase();
    const known = (CHANNEL_IDS as readonly string[]).includes(prefix);
    if (prefix === channel?.toLowerCase() || (channel === undefined && known)) {
      return { channel: prefix, to: to.slice(colon + 1) };
    }
  }
  return channel === undefined ? { to } : { channel, to };
}

function candidate(context: OpenClawDeliveryContext | undefined): ResolvedRoute | undefined {
  if (context?.to === undefined || context.to.trim() === "") return undefined;
  const split = splitTarget(context.channel?.toLowerCase(), context.to.trim());
  if (split.channel === undefined) return undefined;
  const route: ResolvedRoute = { channel: split.channel, to: split.to };
  if (context.accountId !== undefined) route.accountId = context.accountId;
  if (context.threadId !== undefined) route.threadId = context.threadId;
  return route;
}

/** Every route the entry records: the canonical `delivery` (route and context) and the fields before it. */
function routesOf(entry: OpenClawSessionEntry): ResolvedRoute[] {
  const found: Array<ResolvedRoute | undefined> = [];
  const delivery = entry.delivery;
  if (delivery?.kind === "external") {
    const { route, context } = delivery;
    if (route?.target !== undefined) {
      const ref: OpenClawDeliveryContext = { to: route.target.to };
      if (route.channel !== undefined) ref.channel = route.channel;
      if (route.accountId !== undefined) ref.accountId = route.accountId;
      if (route.thread !== undefined) ref.threadId = route.thread.id;
      found.push(candidate(ref));
    }
    found.push(candidate(context));
  } else if (delivery === undefined) {
    found.push(candidate(entry.deliveryContext));
    if (entry.lastTo !== undefined) {
      const legacy: OpenClawDeliveryContext = { to: entry.lastTo };
      if (entry.lastChannel !== undefined) legacy.channel = entry.lastChannel;
      found.push(candidate(legacy));
    }
  }
  // The route and its context usually say the same thing: one destination, however many records of it.
  const unique = new Map<string, ResolvedRoute>();
  for (const route of found) {
    const key = route && `${route.channel}:${route.to}`;
    if (route !== undefined && key !== undefined && !unique.has(key)) unique.set(key, route);
  }
  return [...unique.values()];
}

/** The one route the agent's main session last talked on, or why there is none to use. Never throws. */
export function resolveLastRoute(runtime: OpenClawRuntime, agentId: string): LastRoute {
  const getSessionEntry = runtime.agent?.session?.getSessionEntry;
  if (getSessionEntry === undefined) {
    return { ok: false, reason: 'this OpenClaw has no session API to read "last" from; name channel and to' };
  }
  let entry: OpenClawSessionEntry | undefined;
  try {
    entry = getSessionEntry({ sessionKey: `agent:${agentId}:main`, agentId });
  } catch (error) {
    return {
      ok: false,
      reason: `the main session's route could not be read: ${(error as Error)?.message ?? String(error)}`,
    };
  }
  const routes = entry === undefined ? [] : routesOf(entry);
  const [only] = routes;
  if (only === undefined) return { ok: false, reason: NO_LAST_ROUTE };
  if (routes.length > 1) {
    const choices = routes.map((route) => `${route.channel} ${route.to}`).join(", ");
    return {
      ok: false,
      reason: `channel "last" is ambiguous: the main session has routes ${choices}; name channel and to`,
    };
  }
  return { ok: true, route: only };
}

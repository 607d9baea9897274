/** @module The admission stage: the client a request is counted against, resolved once (behind trusted proxies, the forwarded address). */

import type { IncomingHttpHeaders } from "node:http";
import { isIPv6 } from "node:net";
import proxyAddr from "proxy-addr";
import type { Stage } from "../stage.js";

/** Failures, budgets, allow-lists and listed refusals all use the address found here. */
export function createAdmitStage(sourceAddress: SourceAddressResolver): Stage {
  return function admit(ctx) {
    const address = sourceAddress(ctx.request.remoteAddress, ctx.request.headers);
    return { ...ctx, address, client: clientGroup(address) };
  };
}

/** The key a request's budgets and failed authentications are counted under (see `clientGroup`). */
export type ClientAddressResolver = (
  remoteAddress: string | undefined,
  headers: IncomingHttpHeaders,
) => string;

/**
 * The client an address stands for: `::ffff:10.0.0.1` is `10.0.0.1`, and an IPv6 address is its /64
 * (`2001:db8:0:1::/64`). A /64 is what one subscriber or one host is handed, so each of its addresses is
 * free to its holder: counted one by one, a single client would hold an unbounded number of allowances.
 */
export function clientGroup(address: string): string {
  if (address.startsWith("::ffff:") && address.includes(".")) return address.slice(7);
  const bare = address.split("%")[0]!; // a zone (`fe80::1%eth0`) names the interface, not the client
  if (!isIPv6(bare)) return address;
  return `${leadingHextets(bare, 4).join(":")}::/64`;
}

/** The first `count` 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function leadingHextets(address: string, count: number): string[] {
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const cut = address.indexOf("::");
  const head = groups(cut === -1 ? address : address.slice(0, cut));
  // A dotted IPv4 tail stands for the last two groups; it can only be in the tail, so only its width matters.
  const tail = cut === -1 ? [] : groups(address.slice(cut + 2));
  const tailWidth = tail.reduce((width, group) => width + (group.includes(".") ? 2 : 1), 0);
  const full =
    cut === -1 ? head : [...head, ...Array<string>(8 - head.length - tailWidth).fill("0"), ...tail];
  return full.slice(0, count).map((group) => Number.parseInt(group, 16).toString(16));
}

/** The client's own address: the socket's, or behind trusted proxies the nearest untrusted hop of X-Forwarded-For. */
export type SourceAddressResolver = (
  remoteAddress: string | undefined,
  headers: IncomingHttpHeaders,
) => string;

export function createSourceAddressResolver(trustedProxies: readonly string[]): SourceAddressResolver {
  if (trustedProxies.length === 0) return (remoteAddress) => remoteAddress ?? "unknown";
  const trust = proxyAddr.compile([...trustedProxies]);
  return (remoteAddress, headers) => {
    if (remoteAddress === undefined) return "unknown";
    // proxy-addr walks X-Forwarded-For from the nearest hop outwards and stops at the first untrusted one.
    const request = { headers, connection: { remoteAddress }, socket: { remoteAddress } };
    return proxyAddr(request as never, trust);
  };
}

export function createClientAddressResolver(trustedProxies: readonly string[]): ClientAddressResolver {
  const source = createSourceAddressResolver(trustedProxies);
  return (remoteAddress, headers) => clientGroup(source(remoteAddress, headers));
}

/** @module Finds the client address of a request: the socket's, or X-Forwarded-For when the peer is a trusted proxy (proxy-addr). */
import type { IncomingHttpHeaders } from "node:http";
import proxyAddr from "proxy-addr";

export type ClientAddressResolver = (
  remoteAddress: string | undefined,
  headers: IncomingHttpHeaders,
) => string;

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
function normalizeAddress(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

export function createClientAddressResolver(trustedProxies: readonly string[]): ClientAddressResolver {
  if (trustedProxies.length === 0) return (remoteAddress) => normalizeAddress(remoteAddress ?? "unknown");
  const trust = proxyAddr.compile([...trustedProxies]);
  return (remoteAddress, headers) => {
    if (remoteAddress === undefined) return "unknown";
    // proxy-addr walks X-Forwarded-For from the nearest hop outwards and stops at the first untrusted one.
    const request = { headers, connection: { remoteAddress }, socket: { remoteAddress } };
    return normalizeAddress(proxyAddr(request as never, trust));
  };
}

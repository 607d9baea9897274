/** @module Finds the client address of a request: the socket's, or X-Forwarded-For when the peer is a trusted proxy. */
import type { IncomingMessage } from "node:http";

function normalizeAddress(address: string): string {
  const trimmed = address.trim();
  return trimmed.startsWith("::ffff:") && trimmed.includes(".") ? trimmed.slice(7) : trimmed;
}

export function createClientAddressResolver(
  trustedProxies: readonly string[],
): (req: IncomingMessage) => string {
  const trusted = new Set(trustedProxies.map(normalizeAddress));
  return (req) => {
    const peer = normalizeAddress(req.socket.remoteAddress ?? "unknown");
    if (trusted.size === 0 || !trusted.has(peer)) return peer;
    const forwarded = req.headers["x-forwarded-for"];
    if (typeof forwarded !== "string" || forwarded === "") return peer;
    // Walk from the nearest hop outwards; the first address that is not one of our proxies is the client.
    const hops = forwarded.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizeAddress(hops[i]!);
      if (hop !== "" && !trusted.has(hop)) return hop;
    }
    return peer;
  };
}

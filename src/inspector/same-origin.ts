/** @module Whether a state-changing request to the inspector comes from its own origin: another site's page may not act with the user's session. */
import type { IncomingMessage } from "node:http";

/** Methods that only read: any other changes something (a replay, a login, a logout). */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Why a request that changes something is refused as sent from another origin, or undefined when it may go on.
 * A browser says where a request comes from (`Origin`, `Sec-Fetch-Site`); a client that says nothing (curl, a
 * script) is not a page acting for the user and goes on. An `Origin` is the inspector's own when its host and port
 * are the ones the request was sent to (`Host`): the scheme is left aside, for a proxy that ends TLS in front of it. A
browser that says `Sec-Fetch-Site: same-origin` is believed first, for a proxy that passes its own `Host` on.
 */
export function crossOriginReason(req: IncomingMessage): string | undefined {
  if (READS.has(req.method ?? "GET")) return undefined;
  const site = req.headers["sec-fetch-site"];
  if (site === "cross-site") return "the browser says it comes from another site";
  // Set by the browser, never by a page's script: the inspector's own page, whatever `Host` a proxy passed on.
  if (site === "same-origin") return undefined;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const host = req.headers.host;
  let from: string | undefined;
  try {
    from = new URL(origin).host;
  } catch {
    from = undefined;
  }
  // `Origin: null` (a sandboxed frame, a file) has no host: it is nobody's page.
  if (from === undefined || from === "" || host === undefined || from !== host.toLowerCase()) {
    return `it comes from ${origin === "null" ? "an opaque origin" : "another origin"}`;
  }
  return undefined;
}

/** @module How a Redis URL appears in logs and status lines: without its user name and password. */

/** Where the server is: the URL without its credentials (a `redis://` URL may carry a password). */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "the configured Redis server";
  }
}

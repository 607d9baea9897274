/** @module How a Redis URL appears in logs and status lines: without its user name and password. */

/** Where the server is: the URL without its credentials (a `redis://` URL may carry a password). */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    // An "@" that did not end up as user and password is a malformed URL whose credentials landed elsewhere.
    if (url.includes("@") && parsed.username === "" && parsed.password === "")
      return "the configured Redis server";
    // Only a database number is shown after the host: a password with a "/" in it can end up in the path.
    const database = /^\/\d+$/.test(parsed.pathname) ? parsed.pathname : "";
    return `${parsed.protocol}//${parsed.host}${database}`;
  } catch {
    return "the configured Redis server";
  }
}

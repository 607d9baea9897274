/** @module `hooks.trustedProxies`: addresses, CIDR ranges or proxy-addr's names, checked at start-up. */
import proxyAddr from "proxy-addr";

/**
 * Why the list cannot be used, or undefined when every entry is an address, a CIDR range (`10.0.0.0/8`) or one
 * of `loopback`, `linklocal`, `uniquelocal`.
 */
export function checkTrustedProxies(trustedProxies: readonly string[]): string | undefined {
  try {
    proxyAddr.compile([...trustedProxies]);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

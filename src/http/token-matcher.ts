/** @module Compares a presented token with the hook token in constant time, whatever either length. */
import { timingSafeEqual } from "node:crypto";

/**
 * The comparison always covers the hook token's full byte length: the presented token is copied into a buffer of
 * exactly that size (cut or zero-padded), so the time spent depends on neither the secret's content nor its length.
 * Cheaper than hashing both sides per request, with the same guarantee.
 */
export function createTokenMatcher(token: string): (presented: string) => boolean {
  const expected = Buffer.from(token, "utf8");
  const scratch = Buffer.alloc(expected.length);
  return (presented) => {
    scratch.fill(0);
    scratch.write(presented, "utf8");
    const same = timingSafeEqual(scratch, expected);
    // Bitwise, not short-circuit: both checks always run.
    return (Number(same) & Number(Buffer.byteLength(presented, "utf8") === expected.length)) === 1;
  };
}

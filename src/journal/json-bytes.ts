/** @module A string's JSON form as pieces of its UTF-8 bytes: a large body goes into a journal line without being decoded, escaped and encoded again. */

/** How JSON.stringify writes each byte that needs escaping: `"`, `\` and the control characters. */
const ESCAPES = new Map<number, Buffer>();
const SHORT: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };
for (let byte = 0; byte < 0x20; byte++) {
  ESCAPES.set(byte, Buffer.from(SHORT[byte] ?? `\\u${byte.toString(16).padStart(4, "0")}`, "latin1"));
}
ESCAPES.set(0x22, Buffer.from('\\"', "latin1"));
ESCAPES.set(0x5c, Buffer.from("\\\\", "latin1"));
const QUOTE = Buffer.from('"', "latin1");

/**
 * Past this many bytes to escape, a body (a large JSON document of many strings) takes the text path: collecting
 * the positions one by one would cost more than it saves.
 */
export const MAX_ESCAPED_BYTES = 4096;

/**
 * `JSON.stringify(bytes.toString("utf8"))` as UTF-8, in pieces: the quotes, runs of `bytes` itself (views, not
 * copies) and the escapes between them; undefined when more than `MAX_ESCAPED_BYTES` bytes need escaping. For bytes
 * that are valid UTF-8 (the caller checked): they decode to no lone surrogate, so only `"`, `\` and the control
 * characters are escaped. Each is found with a native search (memchr), not a loop in JavaScript; and no new buffer
 * of the body's size is made (a fresh 30 MB costs its page faults, 0.2 s on a loaded machine).
 */
export function jsonStringPieces(bytes: Buffer): Buffer[] | undefined {
  const found: number[] = [];
  for (const byte of ESCAPES.keys()) {
    for (let at = bytes.indexOf(byte); at !== -1; at = bytes.indexOf(byte, at + 1)) {
      if (found.length === MAX_ESCAPED_BYTES) return undefined;
      found.push(at);
    }
  }
  const pieces: Buffer[] = [QUOTE];
  let from = 0;
  for (const at of Uint32Array.from(found).sort()) {
    if (at > from) pieces.push(bytes.subarray(from, at));
    pieces.push(ESCAPES.get(bytes[at]!)!);
    from = at + 1;
  }
  if (from < bytes.length) pieces.push(bytes.subarray(from));
  pieces.push(QUOTE);
  return pieces;
}

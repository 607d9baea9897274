/** @module Text a caller chose, measured and cut the way it lands in a journal line: in bytes of JSON, not characters (a `"` takes two, a control character six). */

/** Printable ASCII but `"` and `\`: one byte each as JSON, the usual case, measured without a walk. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The bytes the UTF-16 unit at `index` takes inside a JSON string, as UTF-8 (a surrogate pair: 4, on its first unit). */
function unitBytes(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20)
    return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) return 4;
  // A lone surrogate is written as a `\udxxx` escape.
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return 3;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The bytes `text` takes as a JSON string, quotes left out. */
export function jsonBytes(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = unitBytes(text, index);
    bytes += unit;
    if (unit === 4) index++;
  }
  return bytes;
}

/**
 * The longest start of `text` that takes at most `maxBytes` as a JSON string (quotes left out); a surrogate pair is
 * never split. Reads at most `maxBytes` characters: every one takes a byte at least.
 */
export function cutToJsonBytes(text: string, maxBytes: number): string {
  const start = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  if (PLAIN.test(start)) return start;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = unitBytes(text, index);
    if (bytes + unit > maxBytes) return text.slice(0, index);
    bytes += unit;
    if (unit === 4) index++;
  }
  return text;
}

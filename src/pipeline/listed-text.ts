/** @module Text a caller chose, measured and cut the way it lands in a journal line: in bytes of JSON, not characters (a `"` takes two, a control character six). */

/** The bytes a character (a UTF-16 unit, or a surrogate pair taken whole) takes inside a JSON string, as UTF-8. */
function unitBytes(text: string, index: number): { bytes: number; units: number } {
  const code = text.charCodeAt(index);
  if (code === 0x22 || code === 0x5c) return { bytes: 2, units: 1 };
  if (code < 0x20)
    return {
      bytes: code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6,
      units: 1,
    };
  if (code < 0x80) return { bytes: 1, units: 1 };
  if (code < 0x800) return { bytes: 2, units: 1 };
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
  }
  // A lone surrogate is written as a `\udxxx` escape.
  if (code >= 0xd800 && code <= 0xdfff) return { bytes: 6, units: 1 };
  return { bytes: 3, units: 1 };
}

/** The bytes `text` takes as a JSON string, quotes left out. */
export function jsonBytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; ) {
    const unit = unitBytes(text, index);
    bytes += unit.bytes;
    index += unit.units;
  }
  return bytes;
}

/**
 * The longest start of `text` that takes at most `maxBytes` as a JSON string (quotes left out); a surrogate pair is
 * never split. Reads at most `maxBytes` characters: every one takes a byte at least.
 */
export function cutToJsonBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const unit = unitBytes(text, index);
    if (bytes + unit.bytes > maxBytes) return text.slice(0, index);
    bytes += unit.bytes;
    index += unit.units;
  }
  return text;
}

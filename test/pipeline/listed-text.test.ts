/** @module A refusal's text is measured and cut in bytes of JSON as written, whatever characters a caller sent. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutToJsonBytes, jsonBytes } from "../../src/pipeline/listed-text.js";

/** What JSON.stringify writes for it, quotes left out, as UTF-8. */
const written = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** Any UTF-16 units: quotes, backslashes, control characters, astral characters and lone surrogates. */
const anyText = fc.string({ unit: "binary", maxLength: 200 });
const awkward = fc.string({
  unit: fc.constantFrom('"', "\\", "\n", "\u0001", "é", "€", "😀", "\ud800", "\udc00", "a"),
  maxLength: 200,
});

describe("listed text", () => {
  it("measures what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, awkward), (text) => {
        expect(jsonBytes(text)).toBe(written(text));
      }),
    );
  });

  it("cuts to the longest start that fits, never splitting a surrogate pair", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, awkward), fc.nat(400), (text, max) => {
        const cut = cutToJsonBytes(text, max);
        expect(text.startsWith(cut)).toBe(true);
        expect(written(cut)).toBeLessThanOrEqual(max);
        if (cut.length < text.length) {
          const pair = /[\ud800-\udbff][\udc00-\udfff]/.test(text.slice(cut.length, cut.length + 2));
          expect(written(text.slice(0, cut.length + (pair ? 2 : 1)))).toBeGreaterThan(max);
        }
      }),
    );
  });

  it('counts a `"` as two bytes', () => {
    expect(cutToJsonBytes('"'.repeat(100), 11)).toBe('"'.repeat(5));
  });
});

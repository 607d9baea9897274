import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTokenMatcher } from "../../src/http/token-matcher.js";

describe("token matcher", () => {
  it("accepts exactly the token: not a prefix, an extension, a padded or a different string", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 64 }),
        fc.string({ unit: "grapheme", maxLength: 80 }),
        (token, other) => {
          const matches = createTokenMatcher(token);
          expect(matches(token)).toBe(true);
          expect(matches(other)).toBe(other === token);
          expect(matches(token.slice(0, -1))).toBe(false);
          expect(matches(`${token}x`)).toBe(false);
          expect(matches(`${token}\u0000`)).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("treats multi-byte characters by their bytes", () => {
    const matches = createTokenMatcher("tökén-ünïcode-0123456789abcdef");
    expect(matches("tökén-ünïcode-0123456789abcdef")).toBe(true);
    expect(matches("token-unicode-0123456789abcdef")).toBe(false);
    expect(matches("")).toBe(false);
  });
});

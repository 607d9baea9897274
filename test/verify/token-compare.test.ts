/** @module The hook token's constant-time comparison: equal exactly when the strings are equal, whatever their lengths. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTokenComparer } from "../../src/verify/token.js";

describe("createTokenComparer", () => {
  it("accepts the token itself and refuses its prefixes, extensions and padded forms", () => {
    const matches = createTokenComparer("s3cret-token-of-some-length");
    expect(matches("s3cret-token-of-some-length")).toBe(true);
    expect(matches("s3cret-token-of-some-lengt")).toBe(false);
    expect(matches("s3cret-token-of-some-length!")).toBe(false);
    expect(matches("s3cret-token-of-some-length\0")).toBe(false);
    expect(matches("")).toBe(false);
  });

  it("is equality of strings on arbitrary unicode tokens, compared one after another", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: "grapheme" }),
        fc.array(fc.string({ unit: "grapheme" })),
        (token, others) => {
          const matches = createTokenComparer(token);
          for (const other of others) expect(matches(other)).toBe(other === token);
          expect(matches(token)).toBe(true);
        },
      ),
    );
  });
});

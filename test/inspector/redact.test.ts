/** @module What the inspector shows of a stored request: form fields named like Object's own stay fields, and a stored `//` path stays a path. */
import { describe, expect, it } from "vitest";
import { shownBody, shownUrl } from "../../src/inspector/redact.js";

describe("what the inspector shows of a stored request", () => {
  it("keeps form fields named constructor, toString and __proto__ as the fields they are", () => {
    const shown = shownBody(
      "application/x-www-form-urlencoded",
      "constructor=x&toString=y&__proto__=z&token=secret&a=1&a=2",
      undefined,
    )!;
    expect(shown.kind).toBe("form");
    // JSON text on both sides: an object literal's `__proto__` would set a prototype, not a field.
    expect(JSON.stringify(shown.value)).toBe(
      JSON.stringify(JSON.parse('{"constructor":"x","toString":"y","__proto__":"z","a":["1","2"]}')),
    );
  });

  it("reads a stored target that starts with // as a path, not a host", () => {
    expect(shownUrl("//evil.example/hooks/x?a=1&token=t")).toEqual({
      url: "//evil.example/hooks/x?a=1",
      query: { a: "1" },
    });
  });
});

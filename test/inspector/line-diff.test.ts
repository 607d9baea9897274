/** @module The compare view's line diff: both texts come back from it, and what is kept in common is as long as it can be. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffLines } from "../../src/inspector/line-diff.js";

const text = fc
  .array(fc.constantFrom("a", "b", "c", '  "x": 1,', ""), { maxLength: 12 })
  .map((lines) => lines.join("\n"));

function sides(parts: ReturnType<typeof diffLines>) {
  const before = parts.filter((part) => part.kind !== "added").flatMap((part) => part.lines);
  const after = parts.filter((part) => part.kind !== "removed").flatMap((part) => part.lines);
  return { before: before.join("\n"), after: after.join("\n") };
}

describe("diffLines", () => {
  it("gives back both texts: the removed and kept lines are the first, the added and kept the second", () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const parts = diffLines(a, b);
        const got = sides(parts);
        expect(got.before).toBe(a === "" ? "" : a);
        expect(got.after).toBe(b === "" ? "" : b);
      }),
    );
  });

  it("keeps a common line in common, and marks only what changed", () => {
    expect(
      diffLines('{\n  "text": "one",\n  "mode": "now"\n}', '{\n  "text": "two",\n  "mode": "now"\n}'),
    ).toEqual([
      { kind: "same", lines: ["{"] },
      { kind: "removed", lines: ['  "text": "one",'] },
      { kind: "added", lines: ['  "text": "two",'] },
      { kind: "same", lines: ['  "mode": "now"', "}"] },
    ]);
    expect(diffLines("same", "same")).toEqual([{ kind: "same", lines: ["same"] }]);
    expect(diffLines("", "")).toEqual([]);
  });
});

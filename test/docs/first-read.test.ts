/** @module What a first reader meets: a README short enough to read at one sitting, and source that cites only what they can read. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

/** The README's length, in lines, past which it stops being a first read; the rest belongs in docs/. */
const README_MAX_LINES = 200;

describe("a first read", () => {
  it(`the README stays within ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n");
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("no file under src/ refers to the design notes, which users do not have: the README and docs/ are theirs", () => {
    const src = path.join(REPO_ROOT, "src");
    const citing = readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .flatMap((entry) => {
        const file = path.join(entry.parentPath, entry.name);
        return readFileSync(file, "utf8")
          .split("\n")
          .flatMap((line, i) =>
            /\bSPEC\b/.test(line) ? [`${path.relative(REPO_ROOT, file)}:${i + 1}`] : [],
          );
      });
    expect(citing).toEqual([]);
  });
});

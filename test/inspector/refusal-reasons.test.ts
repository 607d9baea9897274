/** @module Every reason a refusal can be listed with has a line on what to check, and the docs' table says the same. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/errors.js";
import { explainReason, REASON_EXPLANATIONS } from "../../src/inspector/refusal-reasons.js";
import { SIGNATURE_REASON } from "../../src/verify/signature-failure.js";
import { REPO_ROOT } from "../helpers/repo.js";

/** The rows of the docs' "Why a request was refused" table: reason → what to check. */
function docsTable(): Map<string, string> {
  const text = readFileSync(path.join(REPO_ROOT, "docs", "inspector.md"), "utf8");
  const section = text.slice(text.indexOf("## Why a request was refused"));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)) rows.set(match[1]!, match[2]!);
  return rows;
}

describe("refusal reasons", () => {
  it("explains every reason the journal writes: the signature and token reasons, NO_MAPPING, every error code", () => {
    const reasons = [
      ...Object.values(SIGNATURE_REASON),
      "TOKEN_MISSING",
      "TOKEN_WRONG",
      "NO_MAPPING",
      ...Object.keys(ERROR_STATUS),
    ];
    for (const reason of reasons) expect(explainReason(reason), reason).toMatch(/^[A-Z].+[.?]$/);
    expect(explainReason("SOMETHING_NEW")).toBeUndefined();
    expect(explainReason("toString")).toBeUndefined();
  });

  it("the docs' table has one row per reason a refusal is listed with, in the page's words", () => {
    const table = docsTable();
    // UNAUTHORIZED and NOT_FOUND are always listed with a finer reason (TOKEN_…, SIGNATURE_…, NO_MAPPING).
    const listed = Object.entries(REASON_EXPLANATIONS).filter(
      ([reason]) => reason !== "UNAUTHORIZED" && reason !== "NOT_FOUND",
    );
    expect([...table.keys()].sort()).toEqual(listed.map(([reason]) => reason).sort());
    for (const [reason, explanation] of listed) expect(table.get(reason), reason).toBe(explanation);
  });
});

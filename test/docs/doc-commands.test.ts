/** @module The README and docs/ as a user reads them: every command they show runs against a real `hooks serve`, and what they print under it is what it answers. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli } from "../helpers/cli.js";
import { at, isCurlLine, isRunBlock, isShell, readDocBlocks, stripComment } from "../helpers/doc-blocks.js";
import { runDocPage } from "../helpers/doc-run.js";
import { REPO_ROOT } from "../helpers/repo.js";

const PAGES = [
  "README.md",
  ...readdirSync(path.join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Pages whose commands a first read depends on: a marker lost there must not quietly stop them running. */
const MUST_RUN = ["README.md", "docs/gateway.md", "docs/http.md", "docs/metrics.md", "docs/senders.md"];

const RUN = PAGES.filter((page) => readDocBlocks(REPO_ROOT, page).some(isRunBlock));

afterEach(cleanupCli);

describe("the README and docs", () => {
  it("run or explain every curl: run, marked not run with a reason, or a gateway's output compared", () => {
    const unaccounted: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(path.join(REPO_ROOT, page), "utf8");
      for (const [i, line] of text.split("\n").entries()) {
        if (/`curl\s[^`]*`/.test(line)) unaccounted.push(`${at(page, i + 1)}: a curl in prose is not run`);
      }
      for (const block of readDocBlocks(REPO_ROOT, page)) {
        const curls = block.lines.flatMap((line, i) => (isCurlLine(line) ? [block.line + i] : []));
        if (curls.length === 0) continue;
        const marker = block.marker;
        const accounted = isShell(block)
          ? isRunBlock(block) || marker?.kind === "not run"
          : marker?.kind === "not run" || (marker?.kind === "run" && marker.output);
        if (!accounted) {
          for (const line of curls)
            unaccounted.push(`${at(page, line)}: a curl neither run nor marked not run`);
        }
      }
    }
    expect(unaccounted).toEqual([]);
  });

  it("run the checkout's CLI as `node bin/hooks.js`, never `npx hooks` or a bare `hooks`", () => {
    const other: string[] = [];
    for (const page of PAGES) {
      for (const block of readDocBlocks(REPO_ROOT, page).filter(isShell)) {
        for (const [i, line] of block.lines.entries()) {
          const code = stripComment(line).replaceAll("node bin/hooks.js", "");
          if (
            /\bnpx hooks\b|(^|[\s;&|($])hooks (serve|check|replay|test|journal|state|mailbox|token)\b/.test(
              code,
            )
          ) {
            other.push(`${at(page, block.line + i)}: ${line.trim()}`);
          }
        }
      }
    }
    expect(other).toEqual([]);
  });

  it("have commands run on every page a first read depends on", () => {
    expect(RUN).toEqual(expect.arrayContaining(MUST_RUN));
  });

  it.each(RUN)(
    "%s: its commands run as shown and answer what it shows",
    async (page) => {
      const report = await runDocPage(REPO_ROOT, page);
      expect(report.steps).toBeGreaterThan(0);
    },
    120_000,
  );
});

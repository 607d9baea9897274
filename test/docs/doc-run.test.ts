/** @module The doc runner itself: how it reads markers, commands and answers, and that a page which drifts from what the gateway answers fails with the page and line. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { compareAnswer, parseAnswer } from "../helpers/doc-answers.js";
import { isRunBlock, parseDocBlocks, shellCommands } from "../helpers/doc-blocks.js";
import { runDocPage } from "../helpers/doc-run.js";

afterEach(cleanupCli);

const FENCE = "```";

describe("reading a page", () => {
  it("takes the marker before a block, its phrases, and runs an unmarked shell block only when it has a curl", () => {
    const blocks = parseDocBlocks(
      "page.md",
      [
        "<!-- run: against npm start; with A, B exported -->",
        `${FENCE}sh`,
        "echo hi",
        FENCE,
        `${FENCE}sh`,
        "ls",
        FENCE,
        `${FENCE}sh`,
        "curl -sS http://127.0.0.1:18789/metrics",
        FENCE,
        "<!-- not run: needs a real sender -->",
        `${FENCE}sh`,
        "curl -sS http://127.0.0.1:18789/metrics",
        FENCE,
      ].join("\n"),
    );
    expect(blocks.map((block) => [block.line, isRunBlock(block)])).toEqual([
      [3, true],
      [6, false],
      [9, true],
      [13, false],
    ]);
    expect(blocks[0]!.marker).toEqual({
      kind: "run",
      againstNpmStart: true,
      exported: ["A", "B"],
      file: false,
      output: false,
    });
    expect(blocks[3]!.marker).toEqual({ kind: "not run", reason: "needs a real sender" });
  });

  it.each([
    ["<!-- run: against npm stop -->", /page\.md:1: unknown phrase in the run marker: "against npm stop"/],
    ["<!-- not run -->", /page\.md:1: "not run" needs its reason/],
  ])("refuses the marker %s, naming the page and line", (marker, message) => {
    expect(() => parseDocBlocks("page.md", `${marker}\n${FENCE}sh\ncurl x\n${FENCE}\n`)).toThrow(message);
  });

  it("splits a shell block into commands with the comments right under them as their answers", () => {
    const [block] = parseDocBlocks(
      "page.md",
      [
        `${FENCE}sh`,
        "curl -sS x \\",
        "  -d '{}'   # a remark at the end of a line",
        "# 200 {}",
        "",
        "# a remark after a blank line",
        "for i in 1 2; do",
        "  echo $i",
        "done",
        "# 1",
        "# 2",
        "cat > f <<'EOF'",
        "# not a comment: the file's text",
        "EOF",
        FENCE,
      ].join("\n"),
    );
    expect(
      shellCommands(block!).map((command) => [command.line, command.text.split("\n").length, command.answer]),
    ).toEqual([
      [2, 2, { line: 4, lines: ["200 {}"] }],
      [7, 3, { line: 10, lines: ["1", "2"] }],
      [12, 3, undefined],
    ]);
  });
});

describe("comparing an answer", () => {
  it.each([
    ['200 {"ok":true,"eventId":"…"}', 200, '{"ok":true,"eventId":"6c6b7d66-0d1e"}', undefined],
    ['200 {"ok":true,"eventId":…}', 200, '{"ok":true,"eventId":12}', undefined],
    ['202 {"sessionKey":"hook:…"}', 202, '{"sessionKey":"hook:ci"}', undefined],
    [
      '202 {"sessionKey":"hook:…"}',
      202,
      '{"sessionKey":"main"}',
      /body\.sessionKey: expected text like "hook:…"/,
    ],
    ['200 {"ok":true}', 200, '{"ok":true,"extra":1}', /expected the fields ok, got extra, ok/],
    ['200 {"ok":true}', 401, '{"ok":false}', /expected status 200, got 401/],
    ["204", 204, "", undefined],
  ])("%s against %i %s", (answer, status, body, problem) => {
    const differs = compareAnswer(parseAnswer([answer]), { status, body });
    if (problem === undefined) expect(differs).toBeUndefined();
    else expect(differs).toMatch(problem);
  });

  it("matches text line by line, `…` standing for any text and a line of only `…` for any lines", () => {
    const answer = parseAnswer(["first …", "…", "last   line"]);
    expect(
      compareAnswer(answer, { status: undefined, body: "first one\na\nb\nlast line\n" }),
    ).toBeUndefined();
    expect(compareAnswer(answer, { status: undefined, body: "first one\nlast line" })).toBeUndefined();
    expect(compareAnswer(answer, { status: undefined, body: "first one\nlast word" })).toMatch(
      /line 3 of the answer: expected "last {3}line"/,
    );
  });
});

describe("running a page", () => {
  const WAKE =
    'curl -sS -X POST http://127.0.0.1:18789/hooks/wake -H "Authorization: Bearer $HOOKS_TOKEN" -H \'Content-Type: application/json\' -d \'{"text":"hi"}\'';

  function page(lines: readonly string[]): string {
    const dir = makeTempDir("hooks-doc-page-");
    writeFileSync(path.join(dir, "page.md"), `${lines.join("\n")}\n`);
    return dir;
  }

  it("passes when every answer is what the gateway gives", async () => {
    const root = page([
      "# A page",
      "",
      "<!-- run: against npm start; with HOOKS_TOKEN exported -->",
      `${FENCE}sh`,
      WAKE,
      '# 200 {"ok":true,"mode":"now","eventId":"…","eventOutcome":"…"}',
      FENCE,
    ]);
    expect(await runDocPage(root, "page.md")).toEqual({ steps: 2 });
  });

  it("fails at the answer's line when the gateway answers something else", async () => {
    const root = page([
      "# A page",
      "",
      "<!-- run: against npm start; with HOOKS_TOKEN exported -->",
      `${FENCE}sh`,
      WAKE,
      '# 200 {"ok":true,"mode":"next-heartbeat","eventId":"…","eventOutcome":"…"}',
      FENCE,
    ]);
    await expect(runDocPage(root, "page.md")).rejects.toThrow(
      /^page\.md:6: `curl .*` answered otherwise: body\.mode: expected "next-heartbeat", got "now"/,
    );
  });

  it("fails when a curl that is run shows no answer", async () => {
    const root = page([
      "<!-- run: against npm start; with HOOKS_TOKEN exported -->",
      `${FENCE}sh`,
      WAKE,
      FENCE,
    ]);
    await expect(runDocPage(root, "page.md")).rejects.toThrow(/^page\.md:3: .* shows its answer under it/);
  });

  it("fails at the block when the gateway's banner is not what the page shows", async () => {
    const root = page([
      "<!-- run: output of npm start -->",
      FENCE,
      "hooks gateway listening on http://127.0.0.1:18789",
      "  config  /…/fixtures/demo/gateway.json5",
      "…",
      FENCE,
    ]);
    await expect(runDocPage(root, "page.md")).rejects.toThrow(
      /^page\.md:3: the gateway printed something else when it started: line 2 of the answer: expected " {2}config {2}\/…\/fixtures\/demo\/gateway\.json5"/,
    );
  });
});

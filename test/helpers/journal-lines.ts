/** @module Reads a journal directory's segment files back as the journal's own reader does (every line format it reads), for tests. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type JournalLine, parseJournalLine } from "../../src/journal/records.js";

/** Every line of every segment, oldest segment first; a line the reader cannot read fails the test. */
export function readJournalLines(dir: string): Array<JournalLine & Record<string, any>> {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .flatMap((name) =>
      readFileSync(path.join(dir, name), "utf8")
        .split("\n")
        .filter((text) => text !== "")
        .map((text) => {
          const line = parseJournalLine(text);
          if (line === undefined) throw new Error(`journal line not readable: ${text.slice(0, 200)}`);
          return line;
        }),
    );
}

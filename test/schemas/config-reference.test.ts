/** @module docs/configuration.md is what the config schemas say now: every field described, every link landing. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { buildConfigReference, CONFIG_REFERENCE_FILE } from "../../src/schemas/config-reference.js";
import { jsonSchemaOf } from "../../src/schemas/generate-schemas.js";
import { buildBlock, type JsonSchema, slug } from "../../src/schemas/schema-tables.js";
import { REPO_ROOT } from "../helpers/repo.js";

const DOCS = path.join(REPO_ROOT, "docs");
const read = (file: string) => readFileSync(file, "utf8");

/** The anchors GitHub gives a page's headings (code blocks skipped; a repeated heading gets `-1`, `-2`, …). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Links in `file` (its text, unless given) to pages of this repository that do not land: a missing page or heading. */
function brokenLinks(
  file: string,
  only: (target: string) => boolean = () => true,
  text = read(file),
): string[] {
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target!) || !only(target!)) continue;
    const [page, anchor] = target!.split("#");
    const targetFile = page ? path.resolve(path.dirname(file), page) : file;
    const anchors = page ? () => anchorsOf(read(targetFile)) : () => anchorsOf(text);
    if (!existsSync(targetFile)) broken.push(`${target} (no such file)`);
    else if (anchor !== undefined && !anchors().has(anchor)) broken.push(`${target} (no such heading)`);
  }
  return broken;
}

describe("the configuration reference", () => {
  const built = buildConfigReference();

  it(`${CONFIG_REFERENCE_FILE} is what the config schemas generate`, () => {
    expect(
      read(path.join(REPO_ROOT, CONFIG_REFERENCE_FILE)),
      `${CONFIG_REFERENCE_FILE} differs from the schemas' descriptions: run \`npm run schemas\` and commit the result`,
    ).toBe(built.markdown);
  });

  it("describes every field of the config", () => {
    expect(built.undescribed, "add v.description(...) to these fields in their schema").toEqual([]);
  });

  it("reports a field, a nested field and a choice that have no description", () => {
    const schema = v.strictObject({
      described: v.pipe(v.optional(v.string()), v.description("Has one.")),
      bare: v.optional(v.number()),
      nested: v.pipe(
        v.optional(
          v.strictObject({ inner: v.boolean(), other: v.pipe(v.string(), v.description("Has one.")) }),
        ),
        v.description("Has one."),
      ),
      choice: v.pipe(
        v.variant("kind", [
          v.pipe(v.strictObject({ kind: v.literal("a") }), v.description("Has one.")),
          v.strictObject({ kind: v.literal("b"), size: v.pipe(v.number(), v.description("Has one.")) }),
        ]),
        v.description("Has one."),
      ),
    });
    const undescribed: string[] = [];
    buildBlock("", jsonSchemaOf(schema) as JsonSchema, "", undescribed);
    expect(undescribed).toEqual(["bare", "nested.inner", 'choice (kind: "b")']);
  });

  it("shows each field's default as the schema declares it", () => {
    const row = (field: string) =>
      built.markdown.split("\n").find((line) => line.startsWith(`| \`${field}\` |`));
    expect(row("hooks.path")).toContain('| `"/hooks"` |');
    expect(row("hooks.store")).toContain('| `{ kind: "memory" }` |');
    expect(row("hooks.mappings[].verify.scheme")).toContain("| required |");
    expect(row("hooks.defaultSessionKey")).toContain("| unset |");
    expect(row("server.port")).toContain("| integer 0–65535 | `18789` |");
  });

  it("links only to pages and headings that exist", () => {
    const page = path.join(REPO_ROOT, CONFIG_REFERENCE_FILE);
    expect(brokenLinks(page, () => true, built.markdown)).toEqual([]);
  });

  it("is linked from the other pages at headings it has", () => {
    const pages = [
      path.join(REPO_ROOT, "README.md"),
      ...readdirSync(DOCS)
        .filter((name) => name.endsWith(".md"))
        .map((name) => path.join(DOCS, name)),
    ];
    const broken = pages.flatMap((page) =>
      brokenLinks(page, (target) => target.split("#")[0]!.endsWith("configuration.md")).map(
        (link) => `${path.relative(REPO_ROOT, page)}: ${link}`,
      ),
    );
    expect(broken).toEqual([]);
  });
});

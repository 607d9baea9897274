/** @module The inspector page works from the package as installed: its script and stylesheet are packed, where the built module looks for them. */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

describe("the inspector in the package", () => {
  it("packs the page's script and stylesheet, two levels above the built module as above the source", async () => {
    const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: REPO_ROOT,
    });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining(["assets/inspector/inspector.js", "assets/inspector/inspector.css"]),
    );
    // inspector-page resolves `../../assets/inspector/`: true of src/inspector/ and of dist/inspector/ alike.
    const build = JSON.parse(readFileSync(path.join(REPO_ROOT, "tsconfig.build.json"), "utf8"));
    expect(build.compilerOptions).toMatchObject({ rootDir: "src", outDir: "dist" });
  }, 30_000);
});

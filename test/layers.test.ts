/** @module The folders import downward only, and the hosts use only the plugin's public entry and the host contract. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./helpers/repo.js";

const SRC = path.join(REPO_ROOT, "src");

/** Lower layers first; a module may import its own layer or any below it. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ["errors.ts", "vocabulary.ts", "safety", "verify", "clock.ts", "metrics"],
  ["config", "events.ts"],
  ["host", "journal", "store"],
  ["actions"],
  ["mapping"],
  ["pipeline"],
  ["http"],
  ["tokens.ts", "options.ts", "prepare-hooks.ts", "status.ts"],
  ["container.ts", "check-config.ts", "compose.ts", "prepare-reload.ts"],
  ["index.ts", "register-hooks.ts", "replay", "inspector"],
  ["gateway", "openclaw", "mailbox", "schemas"],
  ["cli"],
];

function layerOf(file: string): number {
  const top = path.relative(SRC, file).split(path.sep)[0]!;
  const index = LAYERS.findIndex((layer) => layer.includes(top));
  if (index === -1) throw new Error(`${top} has no layer in this test: add it to LAYERS`);
  return index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^(?:import|export)[^;]*?from\s+"(\.[^"]+)"/gms)].map((match) =>
    path.resolve(path.dirname(file), match[1]!.replace(/\.js$/, ".ts")),
  );
}

describe("layers", () => {
  const files = sourceFiles(SRC);

  it("no module imports one of a higher layer", () => {
    const upward = files.flatMap((file) =>
      relativeImports(file)
        .filter((target) => layerOf(target) > layerOf(file))
        .map((target) => `${path.relative(SRC, file)} → ${path.relative(SRC, target)}`),
    );
    expect(upward).toEqual([]);
  });

  it.each(["gateway", "openclaw"])(
    "the %s host uses only the public entry and the host contract of the plugin",
    (host) => {
      const allowed = new Set(
        ["index.ts", "host/contract.ts", "events.ts"].map((name) => path.join(SRC, name)),
      );
      const own = path.join(SRC, host);
      const internal = files
        .filter((file) => file.startsWith(own))
        .flatMap((file) =>
          relativeImports(file)
            .filter((target) => !target.startsWith(own) && !allowed.has(target))
            .map((target) => `${path.relative(SRC, file)} → ${path.relative(SRC, target)}`),
        );
      expect(internal).toEqual([]);
    },
  );

  it("the two hosts do not import each other", () => {
    const crossing = files.flatMap((file) => {
      const from = path.relative(SRC, file).split(path.sep)[0];
      const other = from === "gateway" ? "openclaw" : from === "openclaw" ? "gateway" : undefined;
      if (!other) return [];
      return relativeImports(file)
        .filter((target) => target.startsWith(path.join(SRC, other)))
        .map((target) => `${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
    });
    expect(crossing).toEqual([]);
  });

  it("no module imports itself back through others (no import cycle)", () => {
    const graph = new Map(files.map((file) => [file, relativeImports(file)]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push(
          [...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(SRC, f)).join(" → "),
        );
        return;
      }
      state.set(file, "open");
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it("the request path keeps no module-level table: no Map or WeakMap outside a function in src/pipeline", () => {
    const tables = files
      .filter((file) => file.startsWith(path.join(SRC, "pipeline")))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => /^(?:export )?(?:const|let|var) \w+[^=]*= new (?:Weak)?Map\b/.test(line))
          .map((line) => `${path.relative(SRC, file)}: ${line.trim()}`),
      );
    expect(tables).toEqual([]);
  });
});

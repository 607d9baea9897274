import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import {
  generateManifest,
  generateOpenClawManifest,
  generateSchemas,
} from "../../src/schemas/generate-schemas.js";

const root = path.resolve(import.meta.dirname, "../..");
const readJson = (file: string) => JSON.parse(readFileSync(path.join(root, file), "utf8"));
const FIX = "run `npm run schemas` and commit the result";

describe("generated JSON Schemas", () => {
  it.each(Object.entries(generateSchemas()))("schemas/%s matches the valibot schema", (file, schema) => {
    expect(readJson(`schemas/${file}`), `schemas/${file} drifted: ${FIX}`).toEqual(schema);
  });

  it("plugin.json matches package.json and the generated config schema", () => {
    const pkg = readJson("package.json");
    expect(readJson("plugin.json"), `plugin.json drifted: ${FIX}`).toEqual(generateManifest(pkg));
  });

  it("openclaw.plugin.json matches package.json and the generated config schema", () => {
    const pkg = readJson("package.json");
    expect(readJson("openclaw.plugin.json"), `openclaw.plugin.json drifted: ${FIX}`).toEqual(
      generateOpenClawManifest(pkg),
    );
    expect(readJson("openclaw.plugin.json").configSchema).toEqual(readJson("plugin.json").configSchema);
  });

  it("package.json points OpenClaw at the built adapter, and ships the manifest", () => {
    const pkg = readJson("package.json");
    expect(pkg.openclaw).toEqual({ extensions: ["./dist/openclaw/index.js"] });
    expect(pkg.files).toContain("openclaw.plugin.json");
  });

  it("the plugin's configSchema is the manifest's", () => {
    expect(plugin.configSchema).toEqual(readJson("plugin.json").configSchema);
    expect((plugin.configSchema as { properties: Record<string, unknown> }).properties).toHaveProperty(
      "token",
    );
  });
});

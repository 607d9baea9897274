// Writes schemas/*.json, plugin.json, openclaw.plugin.json and docs/configuration.md from the valibot schemas (run: npm run schemas). jiti runs the TS source.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const jiti = createJiti(import.meta.url);
const { generateSchemas, generateManifest, generateOpenClawManifest } = await jiti.import(
  path.join(root, "src/schemas/generate-schemas.ts"),
);
const { CONFIG_REFERENCE_FILE, generateConfigReference } = await jiti.import(
  path.join(root, "src/schemas/config-reference.ts"),
);

// The page first: it throws, naming them, while a config field has no description, and then nothing is written.
const reference = generateConfigReference();
for (const [file, schema] of Object.entries(generateSchemas())) {
  const target = path.join(root, "schemas", file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(schema, null, 2)}\n`);
}
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
writeFileSync(path.join(root, "plugin.json"), `${JSON.stringify(generateManifest(pkg), null, 2)}\n`);
writeFileSync(
  path.join(root, "openclaw.plugin.json"),
  `${JSON.stringify(generateOpenClawManifest(pkg), null, 2)}\n`,
);
writeFileSync(path.join(root, CONFIG_REFERENCE_FILE), reference);
console.log(`schemas/, plugin.json, openclaw.plugin.json and ${CONFIG_REFERENCE_FILE} written`);

/** @module Reads a gateway config for editing (no `${VAR}` substitution) and writes it back with a `.bak` of the previous file. */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import JSON5 from "json5";
import { writeFileAtomically } from "./atomic-write.js";

export interface EditableConfig {
  file: string;
  /** Absent when the file does not exist yet; setup then creates it. */
  existing?: { text: string; mode: number };
  config: Record<string, unknown>;
}

export async function readConfigForEdit(file: string): Promise<EditableConfig> {
  const absolute = path.resolve(file);
  let text: string;
  let mode: number;
  try {
    text = await readFile(absolute, "utf8");
    mode = (await stat(absolute)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { file: absolute, config: {} };
    throw new Error(`cannot read ${absolute}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    // Parsed as written: `${VAR}` strings must survive the rewrite, not be replaced by their values.
    parsed = JSON5.parse(text);
  } catch (error) {
    throw new Error(`${absolute} is not valid JSON5 (${(error as Error).message}); nothing was changed`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`${absolute} must hold a JSON5 object; nothing was changed`);
  }
  return { file: absolute, existing: { text, mode }, config: parsed as Record<string, unknown> };
}

/** The config holds the hook token: no one but its owner may read it. */
const PRIVATE_MODE = 0o600;

/**
 * Writes `config` as JSON5. The previous file is copied to `<file>.bak` first (JSON5 rewriting drops comments
 * and formatting). A new file is private (0600); an edited one keeps its mode or is tightened to that, never
 * loosened (0644 becomes 0600, 0400 stays 0400). The backup gets the same mode: it may hold a token too.
 */
export async function writeConfig(
  edit: EditableConfig,
  config: Record<string, unknown>,
): Promise<{ backup?: string }> {
  const text = `${JSON5.stringify(config, null, 2)}\n`;
  if (edit.existing === undefined) {
    await writeFileAtomically(edit.file, text, PRIVATE_MODE);
    return {};
  }
  // The owner can always read what was just written (a mode like 0040 would otherwise become 0000).
  const mode = (edit.existing.mode & PRIVATE_MODE) | 0o400;
  const backup = `${edit.file}.bak`;
  // Replaced rather than written into: an old backup keeps its mode when written into, however loose.
  await writeFileAtomically(backup, edit.existing.text, mode);
  await writeFileAtomically(edit.file, text, mode);
  return { backup };
}

/** @module Reads a gateway config for editing (no `${VAR}` substitution) and writes it back with a `.bak` of the previous file. */
import { readFile, stat, writeFile } from "node:fs/promises";
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

/**
 * Writes `config` as JSON5. The previous file is copied to `<file>.bak` first (JSON5 rewriting drops comments
 * and formatting); the new file keeps the old one's permissions, and a new file is private (0600) because it
 * holds the hook token.
 */
export async function writeConfig(
  edit: EditableConfig,
  config: Record<string, unknown>,
): Promise<{ backup?: string }> {
  const text = `${JSON5.stringify(config, null, 2)}\n`;
  if (edit.existing === undefined) {
    await writeFileAtomically(edit.file, text, 0o600);
    return {};
  }
  const backup = `${edit.file}.bak`;
  await writeFile(backup, edit.existing.text, { mode: edit.existing.mode });
  await writeFileAtomically(edit.file, text, edit.existing.mode);
  return { backup };
}

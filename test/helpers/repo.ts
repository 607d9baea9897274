/** @module Paths into the repository and its fixtures, for tests. */
import { readFileSync } from "node:fs";
import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const FIXTURES = path.join(REPO_ROOT, "fixtures");
export const TRANSFORMS_DIR = path.join(FIXTURES, "transforms");

export function readPayload(relative: string): any {
  return JSON.parse(readFileSync(path.join(FIXTURES, "payloads", relative), "utf8"));
}

/** @module Reads fixture files (`.json`, `.json5`) and finds them in a directory. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import * as v from "valibot";
import { isPlainObject } from "../config/plain-object.js";
import { type Fixture, FixtureSchema } from "./fixture-schema.js";

export interface LoadedFixture {
  file: string;
  fixture: Fixture;
  /** The body bytes the request sends, resolved from body, rawBody or bodyFile. */
  rawBody: Buffer | undefined;
}

export class FixtureError extends Error {
  override name = "FixtureError";
}

export function parseFixtureText(text: string, file: string): unknown {
  try {
    return JSON5.parse(text);
  } catch (error) {
    throw new FixtureError(`${file}: not valid JSON5: ${(error as Error).message}`);
  }
}

/**
 * A parsed file is a fixture when it has a `request` naming a `path`; payload files next to fixtures are not,
 * even those with a `request` field of their own (a Stripe event's `request: { id, idempotency_key }`).
 */
export function looksLikeFixture(value: unknown): boolean {
  return isPlainObject(value) && isPlainObject(value.request) && "path" in value.request;
}

export function loadFixture(file: string): LoadedFixture {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    throw new FixtureError(`${file}: cannot read: ${(error as Error).message}`);
  }
  return validateFixture(parseFixtureText(text, file), absolute);
}

export function validateFixture(value: unknown, file: string): LoadedFixture {
  const parsed = v.safeParse(FixtureSchema, value);
  if (!parsed.success) {
    const problems = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`);
    throw new FixtureError(`${file}: not a valid fixture:\n  - ${problems.join("\n  - ")}`);
  }
  const fixture = parsed.output;
  let rawBody: Buffer | undefined;
  if (fixture.request.rawBody !== undefined) rawBody = Buffer.from(fixture.request.rawBody, "utf8");
  else if (fixture.request.rawBodyBase64 !== undefined)
    rawBody = Buffer.from(fixture.request.rawBodyBase64, "base64");
  else if (fixture.request.bodyFile !== undefined) {
    const bodyPath = path.resolve(path.dirname(file), fixture.request.bodyFile);
    try {
      rawBody = readFileSync(bodyPath);
    } catch (error) {
      throw new FixtureError(
        `${file}: request.bodyFile: cannot read ${bodyPath}: ${(error as Error).message}`,
      );
    }
  }
  return { file, fixture, rawBody };
}

/** Fixture files under `dir`, sorted, skipping node_modules and dot-folders. */
export function findFixtureFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.json5?$/.test(entry.name)) out.push(full);
    }
  };
  walk(path.resolve(dir));
  return out.sort();
}

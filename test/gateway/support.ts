/** @module Shared pieces of the gateway tests: config files in temp dirs, authenticated POSTs, record and state readers. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openStateReader, type StateReader } from "../../src/gateway/state-reader.js";

export const TOKEN = "gateway-test-token-0123456789abcdef";
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export interface RecordLine {
  at: string;
  event: string;
  payload: Record<string, any>;
}

/** Writes `gateway.json5` (as JSON, which JSON5 reads) into `dir` and returns its path. */
export function writeConfig(dir: string, config: Record<string, unknown>): string {
  const file = path.join(dir, "gateway.json5");
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** A config with hooks on and the test token; `extra` is merged at the top level. */
export function baseConfig(extra: Record<string, unknown> = {}, hooks: Record<string, unknown> = {}) {
  return { hooks: { enabled: true, token: TOKEN, ...hooks }, ...extra };
}

/**
 * The `serve` arguments of a gateway kept in `dir`: `config`, its state in `dir/state` and its events recorded to
 * `dir/events.jsonl`; those two paths come back with them for the test to read.
 */
export function serveArgs(dir: string, config: string): { args: string[]; record: string; state: string } {
  const record = path.join(dir, "events.jsonl");
  const state = path.join(dir, "state");
  return { args: ["--config", config, "--state-dir", state, "--record", record], record, state };
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = AUTH,
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export function readLines<T = Record<string, any>>(file: string): T[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

export function readRecord(file: string): RecordLine[] {
  return readLines<RecordLine>(file);
}

/** Reads the state database of `stateDir` read-only (as `hooks state` does, also while the gateway runs). */
export function readState<T>(stateDir: string, read: (reader: StateReader) => T): T {
  const reader = openStateReader(stateDir);
  try {
    return read(reader);
  } finally {
    reader.close();
  }
}

/** @module Parsers of the option values several commands share: durations, "since" moments, limits. */
import { InvalidArgumentError } from "commander";

const UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `1h`, `7d` (or `500ms`), in milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError("must be a duration such as 90s, 30m, 1h or 7d");
  return Number(match[1]) * UNITS_MS[match[2]!]!;
}

/** A moment: a duration before now (`1h`), or a date (`2026-11-23`, `2026-11-23T08:00Z`); epoch milliseconds. */
export function parseSince(value: string, now: number = Date.now()): number {
  try {
    return now - parseDuration(value);
  } catch {
    const at = Date.parse(value);
    if (Number.isNaN(at))
      throw new InvalidArgumentError("must be a duration such as 30m, 1h or 2d, or a date");
    return at;
  }
}

/** A count of at least 1. */
export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1)
    throw new InvalidArgumentError("must be a whole number of at least 1");
  return limit;
}

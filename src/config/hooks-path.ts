/** @module Normalises `hooks.path`: leading slash added, trailing slash removed, `/` alone and URL syntax rejected. */

export type HooksPathResult = { ok: true; path: string } | { ok: false; message: string };

export function normalizeHooksPath(input: string): HooksPathResult {
  const trimmed = input.trim();
  if (/[?#\s]/.test(trimmed)) return { ok: false, message: "must not contain '?', '#' or spaces" };
  let path = trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
  path = path.replace(/\/+$/, "");
  if (path === "") return { ok: false, message: 'must not be "/" alone: the intake needs a path of its own' };
  if (path.includes("//")) return { ok: false, message: "must not contain empty segments ('//')" };
  return { ok: true, path };
}

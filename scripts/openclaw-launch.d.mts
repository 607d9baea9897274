/** @module Types for scripts/openclaw-launch.mjs, so the TypeScript end-to-end tests can import it. */
import type { OpenClawRuntime } from "./openclaw-runtime.mjs";

export interface OpenClawDirs {
  home: string;
  tmpDir: string;
  stateDir: string;
  configPath: string;
}

export declare function isolatedOpenClawEnv(
  runtime: OpenClawRuntime,
  dirs: OpenClawDirs,
): Record<string, string>;
export declare function openClawRunArgs(runtime: OpenClawRuntime, port: number): string[];
export declare function isOpenClawReady(url: string): Promise<boolean>;
export declare function freePort(): Promise<number>;
export declare function descendants(pid: number): number[];
export declare function killTree(pid: number, signal: NodeJS.Signals): void;

/** @module Types for scripts/build-dist.mjs, so the tests' global setup can import it. */
export declare function distUpToDate(root?: string): boolean;
export declare function buildDist(root?: string): { built: boolean; ms: number; output?: string };

/** @module Finds the candidate mappings of a hook name in constant time: an index by path plus the path-less list. */
import type { CompiledMapping } from "./compile-mappings.js";

export class MappingIndex {
  private readonly byPath = new Map<string, CompiledMapping[]>();
  private readonly maxBytesByPath = new Map<string, number>();
  private readonly pathless: CompiledMapping[] = [];
  private pathlessMaxBytes = 0;

  constructor(mappings: readonly CompiledMapping[]) {
    for (const mapping of mappings) {
      if (mapping.matchPath === undefined) {
        this.pathless.push(mapping);
        this.pathlessMaxBytes = Math.max(this.pathlessMaxBytes, mapping.maxBodyBytes);
        continue;
      }
      const list = this.byPath.get(mapping.matchPath);
      if (list) list.push(mapping);
      else this.byPath.set(mapping.matchPath, [mapping]);
      this.maxBytesByPath.set(
        mapping.matchPath,
        Math.max(this.maxBytesByPath.get(mapping.matchPath) ?? 0, mapping.maxBodyBytes),
      );
    }
  }

  /** Mappings that may own `hook`, in resolution order; undefined when none can (404 before the body). */
  candidates(hook: string): readonly CompiledMapping[] | undefined {
    const exact = this.byPath.get(hook);
    if (!exact) return this.pathless.length > 0 ? this.pathless : undefined;
    if (this.pathless.length === 0) return exact;
    return mergeByOrder(exact, this.pathless);
  }

  /** The largest body any candidate of `hook` accepts. */
  maxBodyBytes(hook: string): number {
    return Math.max(this.maxBytesByPath.get(hook) ?? 0, this.pathlessMaxBytes);
  }
}

function mergeByOrder(a: readonly CompiledMapping[], b: readonly CompiledMapping[]): CompiledMapping[] {
  const out: CompiledMapping[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]!.order < b[j]!.order ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

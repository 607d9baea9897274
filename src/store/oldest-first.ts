/** @module Trimming a Map to a size, oldest entries (insertion order) first, in constant time per insert. */

/**
 * Drops a Map's oldest entries (insertion order) beyond a size, in constant time per insert. It keeps one live
 * iterator rather than starting a new one each time: V8 leaves a deleted entry as a gap until the table is
 * rebuilt, and a fresh iterator walks every gap, which grew to about 120 µs per insert in a full store of
 * 100,000 ids (bench/PROFILE.md). A key re-inserted later moves behind the iterator and is met again in turn.
 */
export class OldestFirst {
  private keys: Iterator<string>;

  constructor(private readonly map: Map<string, unknown>) {
    this.keys = map.keys();
  }

  trimTo(max: number): void {
    while (this.map.size > max) {
      let next = this.keys.next();
      // A finished iterator stays finished, even when entries are added after: start a new one.
      if (next.done) {
        this.keys = this.map.keys();
        next = this.keys.next();
        if (next.done) return;
      }
      this.map.delete(next.value);
    }
  }
}

/** @module The connections waiting for a request's headers, per client address in the order they began to wait, and which address has the most: what a full gateway closes first. */
import type { Socket } from "node:net";

/** One client address's connections that wait for a request's headers, longest-waiting first. */
export interface Waiting {
  readonly waiting: Set<Socket>;
}

/**
 * Every step is O(1): addresses are kept in buckets by how many connections they have waiting, and the largest
 * bucket's count is followed as counts move by one, so the address with the most is found without a scan.
 */
export class WaitingConnections<Owner extends Waiting> {
  private readonly byCount = new Map<number, Set<Owner>>();
  private most = 0;

  /** `socket` of `owner` starts to wait for a request's headers (it goes to the back of its owner's line). */
  enter(owner: Owner, socket: Socket): void {
    const before = owner.waiting.size;
    owner.waiting.add(socket);
    if (owner.waiting.size !== before) this.move(owner, before, before + 1);
  }

  /** `socket` of `owner` stops waiting: its headers arrived, or it closed. */
  leave(owner: Owner, socket: Socket): void {
    if (owner.waiting.delete(socket)) this.move(owner, owner.waiting.size + 1, owner.waiting.size);
  }

  /** The address with the most connections waiting (of several, the first to reach that many). */
  busiest(): Owner | undefined {
    return this.byCount.get(this.most)?.values().next().value;
  }

  /** The connection of `owner` that has waited longest. */
  static oldest(owner: Waiting): Socket | undefined {
    return owner.waiting.values().next().value;
  }

  /** An emptied bucket is kept for the next owner at that count (at most one per count): no Set made per request. */
  private move(owner: Owner, from: number, to: number): void {
    const bucket = this.byCount.get(from);
    bucket?.delete(owner);
    if (to > 0) {
      let next = this.byCount.get(to);
      if (next === undefined) {
        next = new Set();
        this.byCount.set(to, next);
      }
      next.add(owner);
    }
    // Counts move by one: when the largest bucket empties, the one below holds the owner that just left it.
    if (to > this.most) this.most = to;
    else if (from === this.most && (bucket === undefined || bucket.size === 0)) this.most = to;
  }
}

/** @module A list a stand-in records into, which a test can wait on for the first entry that matches (already there, or still to come). */

interface Waiter<T> {
  predicate: (item: T) => boolean;
  resolve: (item: T) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class AwaitedLog<T> {
  readonly items: T[] = [];
  private readonly waiters = new Set<Waiter<T>>();

  /** `name` says what closed, in the error of a wait still open then ("stub model"). */
  constructor(private readonly name: string) {}

  push(item: T): void {
    this.items.push(item);
    for (const waiter of [...this.waiters]) {
      if (!waiter.predicate(item)) continue;
      this.waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve(item);
    }
  }

  /** The first entry `predicate` accepts; rejects after `timeoutMs` with `timedOut()`'s message (what was seen). */
  waitFor(predicate: (item: T) => boolean, timeoutMs: number, timedOut: () => string): Promise<T> {
    const seen = this.items.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(timedOut()));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Rejects every wait still open. */
  close(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`${this.name} closed`));
    }
    this.waiters.clear();
  }
}

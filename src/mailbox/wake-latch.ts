/** @module What ends the watcher's wait between syncs: new mail, a dropped connection, a stop request, or the poll timer. */

export type WakeReason = "exists" | "closed" | "stopped";

export interface WakeLatch {
  /** Remembered until the next `wait`, so an event during a sync is not missed. */
  notify(reason: WakeReason): void;
  /** Resolves with the pending or next reason, or `"poll"` after `timeoutMs`. */
  wait(timeoutMs: number): Promise<WakeReason | "poll">;
}

// A stop outranks a dropped connection, which outranks new mail: the stronger reason decides what happens next.
const RANK: Record<WakeReason, number> = { exists: 1, closed: 2, stopped: 3 };

export function createWakeLatch(): WakeLatch {
  let pending: WakeReason | undefined;
  let wake: ((reason: WakeReason) => void) | undefined;
  return {
    notify(reason) {
      if (wake !== undefined) {
        const resolve = wake;
        wake = undefined;
        resolve(reason);
        return;
      }
      if (pending === undefined || RANK[reason] > RANK[pending]) pending = reason;
    },
    wait(timeoutMs) {
      if (pending !== undefined) {
        const reason = pending;
        // A closed connection or a stop stays true for later waits; new mail is consumed by the sync it causes.
        if (reason === "exists") pending = undefined;
        return Promise.resolve(reason);
      }
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve("poll");
        }, timeoutMs);
        wake = (reason) => {
          clearTimeout(timer);
          if (reason !== "exists") pending = reason;
          resolve(reason);
        };
      });
    },
  };
}

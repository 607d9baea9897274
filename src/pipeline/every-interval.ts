/** @module A warning said at most once per interval, by the clock's time: the calls in between are dropped. */
import type { Clock } from "../clock.js";

export function everyInterval(
  clock: Clock,
  intervalMs: number,
  warn: (requestId: string | undefined) => void,
): (requestId: string | undefined) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (requestId) => {
    const now = clock.now();
    if (now - last < intervalMs) return;
    last = now;
    warn(requestId);
  };
}

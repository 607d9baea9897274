/** @module Counts failed authentications per client address and says when an address is throttled. */

export interface FailureVerdict {
  throttled: boolean;
  /** Seconds until the address's window ends; sent as Retry-After. */
  retryAfterSeconds: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/** Beyond this many tracked addresses, expired windows are swept, then the oldest dropped. */
const MAX_TRACKED_ADDRESSES = 10_000;

export class AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one failure; the address is throttled once it is over the limit within its window. */
  recordFailure(address: string): FailureVerdict {
    const now = this.now();
    let window = this.windows.get(address);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.delete(address);
      this.windows.set(address, window);
      if (this.windows.size > MAX_TRACKED_ADDRESSES) this.sweep(now);
    }
    window.count++;
    return {
      throttled: window.count > this.limit,
      retryAfterSeconds: Math.max(1, Math.ceil((window.resetAt - now) / 1000)),
    };
  }

  /** A correct token clears the address's record. */
  reset(address: string): void {
    if (this.windows.size > 0) this.windows.delete(address);
  }

  private sweep(now: number): void {
    for (const [address, window] of this.windows) {
      if (window.resetAt <= now) this.windows.delete(address);
    }
    // Map order is insertion order, so the first keys are the oldest windows.
    for (const address of this.windows.keys()) {
      if (this.windows.size <= MAX_TRACKED_ADDRESSES) break;
      this.windows.delete(address);
    }
  }
}

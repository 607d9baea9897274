/** @module The Store port: state a deployment may share between gateways (auth-failure counters today). */

export interface CounterWindow {
  /** Hits counted in the current window, this one included. */
  count: number;
  /** When the window ends (epoch milliseconds). */
  resetAt: number;
}

export interface Store {
  /** Counts one hit on `key`; a missing or expired counter starts a new window of `windowMs`. */
  increment(key: string, windowMs: number): Promise<CounterWindow>;
  /** Forgets `key`'s counter. */
  reset(key: string): Promise<void>;
  /** Releases connections and timers; the store is not used afterwards. */
  close(): Promise<void>;
}

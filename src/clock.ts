/** @module The Clock port: wall-clock time in milliseconds, swappable so tests and replays control it. */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** @module The clock and id ports: wall-clock time in milliseconds and fresh ids, swappable so tests and replays control them. */
import { randomUUID } from "node:crypto";

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Ids {
  /** A fresh UUID v4 (request ids, event ids, run ids, `hook:<uuid>` session keys). */
  uuid(): string;
  /** A fresh id for the safety wrapper's markers: unguessable, so content cannot forge the end marker. */
  markerId(): string;
}

export const randomIds: Ids = {
  uuid: () => randomUUID(),
  // 64 random bits from a UUID's random digits (not its version or variant digits): Node draws UUIDs from a
  // cached pool of entropy, where randomBytes(8) is a call into OpenSSL per id (8 µs per request, PROFILE.md).
  markerId: () => {
    const uuid = randomUUID();
    return uuid.slice(0, 8) + uuid.slice(24, 32);
  },
};

/** @module The clock and id ports: wall-clock time in milliseconds and fresh ids, swappable so tests and replays control them. */
import { randomUUID } from "node:crypto";
import { randomMarkerId } from "./safety/wrap-external.js";

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

// The platform's own functions, not wrappers of them: nothing of this module runs on a request.
export const systemClock: Clock = { now: Date.now };

export interface Ids {
  /** A fresh UUID v4 (request ids, event ids, run ids, `hook:<uuid>` session keys). */
  uuid(): string;
  /** A fresh id for the safety wrapper's markers: unguessable, so content cannot forge the end marker. */
  markerId(): string;
}

export const randomIds: Ids = { uuid: randomUUID, markerId: randomMarkerId };

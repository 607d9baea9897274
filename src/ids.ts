/** @module The Ids port: where request ids, event ids, run ids, generated session keys and marker ids come from. */
import { randomBytes, randomUUID } from "node:crypto";

export interface Ids {
  /** A fresh UUID v4 (request ids, event ids, run ids, `hook:<uuid>` session keys). */
  uuid(): string;
  /** A fresh id for the safety wrapper's markers: unguessable, so content cannot forge the end marker. */
  markerId(): string;
}

export const randomIds: Ids = {
  uuid: () => randomUUID(),
  markerId: () => randomBytes(8).toString("hex"),
};

/** @module What an agent turn counts against (its mapping, or `/agent`), and the caps of each. */
import type { EventSource } from "../events.js";

/** A mapping's id, or `""` for `/agent` (its turns name no mapping): what a turn counts against. */
export type TurnKey = string;

/** How many turns of a key may run at once, and how many more may wait for a slot. */
export interface TurnCap {
  running: number;
  waiting: number;
}

/** A key's caps; asked at every decision, so a reload applies to turns already waiting. */
export type TurnCaps = (key: TurnKey) => TurnCap;

export function turnKey(source: EventSource): TurnKey {
  return source.mappingId ?? "";
}

/** @module What one request holds of its hooks' turn slots between its claim and its hand-off, and the refusal when a queue is full. */
import { HookError } from "../errors.js";
import type { TurnKey } from "./turn-key.js";

/**
 * Seconds a sender refused for a full queue is told to wait: a turn takes minutes, and the queue empties one turn at a
 * time, so an earlier retry would mostly be refused again.
 */
export const QUEUE_FULL_RETRY_SECONDS = 60;

/** What a pass gives back to the gate it was claimed from. */
export interface QueuePlaces {
  /** A slot held and never handed to a start. */
  release(key: TurnKey): void;
  /** A place in the queue given up (the run entered the gate, or the request was refused). */
  unplace(key: TurnKey): void;
}

/**
 * The slots a request holds from before its admission until its hand-off, so a turn the host admitted (in OpenClaw:
 * started) is never queued after all, and turns that will wait are not admitted at request time.
 */
export class TurnPass {
  /** Some turn of the request had no slot: it waits, and the answer says so. */
  queued = false;
  private readonly held = new Map<string, TurnKey>();
  /** Runs that will wait: their places in their key's queue, kept from the claim to the hand-off. */
  private readonly places = new Map<string, TurnKey>();

  constructor(private readonly gate: QueuePlaces) {}

  /** The run holds a slot: it starts at hand-off, and was admitted with its request. */
  holds(runId: string): boolean {
    return this.held.has(runId);
  }

  /** @internal */
  hold(runId: string, key: TurnKey): void {
    this.held.set(runId, key);
  }

  /** @internal */
  place(runId: string, key: TurnKey): void {
    this.places.set(runId, key);
  }

  /**
   * Hands the run's slot to its start; false when this pass holds none for it. A place in the queue it held is given
   * up: the run enters the gate right after (it takes the queue place itself, or a slot freed meanwhile).
   */
  take(runId: string): boolean {
    const key = this.places.get(runId);
    if (key !== undefined) {
      this.places.delete(runId);
      this.gate.unplace(key);
    }
    return this.held.delete(runId);
  }

  /** Gives back the slots and places not handed to a start: the request was refused after its claim. Safe to call twice. */
  cancel(): void {
    for (const key of this.held.values()) this.gate.release(key);
    this.held.clear();
    for (const key of this.places.values()) this.gate.unplace(key);
    this.places.clear();
  }
}

/** The 429 a request gets when one of its turns finds its queue full. */
export function queueFull(most: number): HookError {
  const turns = most === 1 ? "1 agent turn" : `${most} agent turns`;
  return new HookError(
    "TURNS_QUEUED_FULL",
    `This hook has ${turns} waiting for a slot, its most; retry in ${QUEUE_FULL_RETRY_SECONDS} s.`,
    { headers: { "Retry-After": String(QUEUE_FULL_RETRY_SECONDS) } },
  );
}

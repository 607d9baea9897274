/** @module The cap on agent turns running at once, per mapping (and for `/agent`): a turn past it waits in its mapping's queue, in order, until a turn of that mapping ends. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import { errorMessage, HookError } from "../errors.js";
import type { EventSource } from "../events.js";
import type { HostLogger } from "../host/contract.js";

/** A mapping's id, or `""` for `/agent` (its turns name no mapping): what a turn counts against. */
export type TurnKey = string;

/** How many turns of a key may run at once, and how many more may wait for a slot. */
export interface TurnCap {
  running: number;
  waiting: number;
}

/** A key's caps; asked at every decision, so a reload applies to turns already waiting. */
export type TurnCaps = (key: TurnKey) => TurnCap;

/**
 * Seconds a sender refused for a full queue is told to wait: a turn takes minutes, and the queue empties one turn at a
 * time, so an earlier retry would mostly be refused again.
 */
export const QUEUE_FULL_RETRY_SECONDS = 60;

export function turnKey(source: EventSource): TurnKey {
  return source.mappingId ?? "";
}

/** A started turn's hold on its slot. */
export interface Slot {
  /** Neither paused nor stopped since the turn took it: the turn may still go to the host. */
  open(): boolean;
  /** Gives the slot to the next turn waiting; only the first call counts, and none after a stop (it forgot the counts). */
  release(): void;
}

/** Starts a turn on a slot it holds. */
export type Start = (slot: Slot) => void;

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

  constructor(private readonly gate: TurnGate) {}

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

export class TurnGate {
  private readonly running = new Map<TurnKey, number>();
  private readonly waiting = new Map<TurnKey, Start[]>();
  /** Queue places held by requests between their claim and their hand-off (the journal's write is between). */
  private readonly placed = new Map<TurnKey, number>();
  /** The host is stopping: every turn waits, unhanded, for the next start. */
  private paused = false;
  /** Counts the stops: a slot taken before one is not the next start's to give back. */
  private generation = 0;

  constructor(
    private caps: TurnCaps,
    private readonly logger: HostLogger,
  ) {}

  /** A reload's caps: waiting turns stay, and start now if the new cap has room for them. */
  setCaps(caps: TurnCaps): void {
    this.caps = caps;
    for (const key of [...this.waiting.keys()]) this.drain(key);
  }

  /**
   * Holds a slot for each of the plans' runs that can start now (nothing of its key waits, and its cap has room), and
   * a place in its key's queue for each of the others. Throws 429 `TURNS_QUEUED_FULL` when a run finds its queue
   * full, holding nothing: a request is accepted whole or not at all.
   */
  claim(plans: readonly Pick<ActionPlan, "run">[]): TurnPass {
    const pass = new TurnPass(this);
    for (const { run } of plans) {
      if (run === undefined) continue;
      const key = turnKey(run.source);
      if (this.hasRoom(key)) {
        this.take(key);
        pass.hold(run.runId, key);
        continue;
      }
      const waiting = (this.waiting.get(key)?.length ?? 0) + (this.placed.get(key) ?? 0);
      const most = this.caps(key).waiting;
      if (waiting >= most) {
        pass.cancel();
        throw queueFull(most);
      }
      this.placed.set(key, (this.placed.get(key) ?? 0) + 1);
      pass.place(run.runId, key);
      pass.queued = true;
    }
    return pass;
  }

  /** @internal A request's place in the queue is given up (it entered the gate, or was refused). */
  unplace(key: TurnKey): void {
    const count = (this.placed.get(key) ?? 0) - 1;
    if (count > 0) this.placed.set(key, count);
    else this.placed.delete(key);
  }

  /**
   * Starts the turn now when it holds a slot (`claimed`) or one is free with nothing waiting before it; else it
   * waits. Returns true when it waits.
   */
  enter(run: PendingRun, start: Start, claimed: boolean): boolean {
    const key = turnKey(run.source);
    if (claimed && this.paused) this.release(key);
    else if (claimed || this.hasRoom(key)) {
      if (!claimed) this.take(key);
      this.begin(key, start);
      return false;
    }
    const queue = this.waiting.get(key);
    if (queue === undefined) this.waiting.set(key, [start]);
    else queue.push(start);
    return true;
  }

  /** A turn of `key` ended (its summary is out): its slot goes to the next one waiting. */
  release(key: TurnKey): void {
    const count = (this.running.get(key) ?? 0) - 1;
    if (count > 0) this.running.set(key, count);
    else this.running.delete(key);
    this.drain(key);
  }

  /** Turns waiting for a slot, by key (the metrics read it at each scrape). */
  queued(): ReadonlyMap<TurnKey, number> {
    const sizes = new Map<TurnKey, number>();
    for (const [key, queue] of this.waiting) sizes.set(key, queue.length);
    return sizes;
  }

  /** The host takes no new work (it is stopping): no turn starts from now on; the waiting ones stay in the journal. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** Forgets waiting turns and counts: they stay unfinished in the journal, and the next start runs them. */
  stop(): void {
    this.waiting.clear();
    this.running.clear();
    this.generation++;
  }

  private hasRoom(key: TurnKey): boolean {
    return !this.paused && !this.waiting.has(key) && (this.running.get(key) ?? 0) < this.caps(key).running;
  }

  private take(key: TurnKey): void {
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
  }

  /** Runs `start` on a slot of `key` already taken. */
  private begin(key: TurnKey, start: Start): void {
    try {
      start(this.slot(key));
    } catch (error) {
      // The turn is tracked before it is emitted: its deadline gives the slot back. Its record stays unfinished.
      this.logger.error(`an agent turn could not be started: ${errorMessage(error)}`);
    }
  }

  private slot(key: TurnKey): Slot {
    const generation = this.generation;
    let held = true;
    return {
      open: () => !this.paused && this.generation === generation,
      release: () => {
        if (!held) return;
        held = false;
        if (this.generation === generation) this.release(key);
      },
    };
  }

  private drain(key: TurnKey): void {
    const queue = this.waiting.get(key);
    while (
      !this.paused &&
      queue !== undefined &&
      queue.length > 0 &&
      (this.running.get(key) ?? 0) < this.caps(key).running
    ) {
      // Out of the queue before it starts: a turn that ends at once releases its slot from inside this loop.
      const start = queue.shift()!;
      this.take(key);
      this.begin(key, start);
    }
    if (queue !== undefined && queue.length === 0 && this.waiting.get(key) === queue)
      this.waiting.delete(key);
  }
}

function queueFull(most: number): HookError {
  const turns = most === 1 ? "1 agent turn" : `${most} agent turns`;
  return new HookError(
    "TURNS_QUEUED_FULL",
    `This hook has ${turns} waiting for a slot, its most; retry in ${QUEUE_FULL_RETRY_SECONDS} s.`,
    { headers: { "Retry-After": String(QUEUE_FULL_RETRY_SECONDS) } },
  );
}

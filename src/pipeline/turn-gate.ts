/** @module The cap on agent turns running at once, per mapping (and for `/agent`): a turn past it waits in its mapping's queue, in order, until a turn of that mapping ends. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { type TurnCaps, type TurnKey, turnKey } from "./turn-key.js";
import { type QueuePlaces, queueFull, TurnPass } from "./turn-pass.js";

/** A started turn's hold on its slot. */
export interface Slot {
  /** Neither paused nor stopped since the turn took it: the turn may still go to the host. */
  open(): boolean;
  /** Gives the slot to the next turn waiting; only the first call counts, and none after a stop (it forgot the counts). */
  release(): void;
}

/** Starts a turn on a slot it holds. */
export type Start = (slot: Slot) => void;

export class TurnGate implements QueuePlaces {
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

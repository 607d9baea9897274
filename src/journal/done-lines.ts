/** @module `done` lines held back until the host has stored what their records caused, so a crash in between repeats the effects rather than losing them. */
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";

/**
 * How long a stop waits for the host to confirm what it stored. A host that cannot write (a full disk) may keep its
 * writes and try again for longer; the records it has not confirmed stay unfinished, and the next start finishes them.
 */
const HOST_WAIT_AT_CLOSE_MS = 2_000;

/**
 * Writes the `done` lines once the host has stored what their events caused: a crash in between leaves the
 * records unfinished, and the next start emits their events again by id rather than losing them. Lines that
 * arrive meanwhile wait for the next round.
 */
/** The host's durability barrier: what it wrote of the events is as durable as the journal's lines once it resolves. */
export interface DurabilityBarrier {
  persisted?(): Promise<void>;
}

export class DoneLines {
  /** Lines waiting for the host, with their record ids. */
  private waiting: Array<{ id: string; line: string }> = [];
  private writing: Promise<void> | undefined;
  /** Counts stops: a wait for the host that outlives its run writes nothing into the next one's file. */
  private run = 0;

  constructor(
    /** The host's "what you emitted so far is stored"; without one, lines are written in the next turn. */
    private readonly host: DurabilityBarrier | undefined,
    private readonly logger: HostLogger,
    /** Writes one line whose record's effects are stored. */
    private readonly write: (id: string, line: string) => void,
  ) {}

  add(id: string, line: string): void {
    this.waiting.push({ id, line });
    this.writing ??= this.writeWhenStored();
  }

  /**
   * Waits a little for the host, then gives up on what is left: the file is about to close, and those records stay
   * unfinished for the next start.
   */
  async stop(): Promise<void> {
    if (this.writing !== undefined) await withinMs(this.writing, HOST_WAIT_AT_CLOSE_MS);
    this.run++;
    this.writing = undefined;
    this.waiting = [];
  }

  private async writeWhenStored(): Promise<void> {
    const run = this.run;
    while (this.waiting.length > 0) {
      const lines = this.waiting;
      this.waiting = [];
      let stored = true;
      try {
        await this.host?.persisted?.();
      } catch (error) {
        stored = false;
        // Left unfinished: the next start hands their events over again.
        this.logger.warn(`journal: the gateway could not store what was handed over: ${errorMessage(error)}`);
      }
      // Stopped meanwhile: the file is closed (or another run's), and these records are left for the next start.
      if (this.run !== run) return;
      if (!stored) continue;
      for (const { id, line } of lines) this.write(id, line);
    }
    this.writing = undefined;
  }
}

/** Waits for `promise`, but no longer than `ms`. */
async function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise, timeout]);
  clearTimeout(timer);
}

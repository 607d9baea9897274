/** @module The agent turns under way: how each is cancelled, chained behind the turns of its conversation, and waited for. */

export class TurnTimeout extends Error {}
export class GatewayStopping extends Error {}

/**
 * How a turn is stopped (deadline or gateway stop): a promise for the race, and an AbortSignal made only when the
 * runner asks for one. Building an AbortController per turn was the largest single cost of an echo turn
 * (bench/PROFILE.md); a runner that never reads its signal (echo) never pays for it.
 */
export class TurnCancel {
  reason: Error | undefined;
  readonly cancelled: Promise<never>;
  private controller: AbortController | undefined;
  private reject!: (reason: Error) => void;

  constructor() {
    this.cancelled = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
    // Nobody may be racing it yet (a turn queued behind another): never an unhandled rejection.
    this.cancelled.catch(() => undefined);
  }

  signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.reason !== undefined && !this.controller.signal.aborted) this.controller.abort(this.reason);
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.reject(reason);
  }
}

/** The turns received and not yet finished, by run id, each with its cancel and the promise of its end. */
export class RunningTurns {
  private readonly active = new Map<string, { cancel: TurnCancel; done: Promise<void> }>();
  // Turns of one session key (of one agent) run one after the other: a persistent turn sees the reply of the one before.
  private readonly chains = new Map<string, Promise<void>>();
  private idleWaiters: Array<() => void> = [];

  get size(): number {
    return this.active.size;
  }

  /**
   * Runs `run` once the turns before it in the conversation `shared` are done. The promise returned never rejects:
   * what `run` throws goes to `failed`, and later turns of the conversation still run.
   */
  add(
    runId: string,
    shared: string,
    cancel: TurnCancel,
    run: () => Promise<void>,
    failed: (error: unknown) => void,
  ): Promise<void> {
    const previous = this.chains.get(shared) ?? Promise.resolve();
    const done = previous.then(() => run()).catch(failed);
    this.chains.set(shared, done);
    this.active.set(runId, { cancel, done });
    return done;
  }

  /** Forgets a turn that is done (`done`, what `add` returned); the last one to go wakes whoever waits for idle. */
  remove(runId: string, shared: string, done: Promise<void>): void {
    this.active.delete(runId);
    if (this.chains.get(shared) === done) this.chains.delete(shared);
    if (this.active.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves when no turn is running, or after `timeoutMs`; returns whether it went idle. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.active.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Aborts every turn running now with `reason` and waits until each has ended. */
  async abortAll(reason: () => Error): Promise<void> {
    const turns = [...this.active.values()];
    for (const { cancel } of turns) cancel.abort(reason());
    await Promise.all(turns.map(({ done }) => done));
  }
}

/** @module Delivery-state I/O that must succeed: its failures end the watcher instead of triggering a reconnect. */

/** A problem that reconnecting cannot fix (the state file cannot be written, the hook refuses for good). */
export class FatalError extends Error {}

/** State I/O failures are fatal: delivering on without recording would resend everything after a restart. */
export async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new FatalError(`delivery state: ${(error as Error).message}`);
  }
}

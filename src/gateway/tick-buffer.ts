/** @module Collects text written during one event-loop turn and hands it on in one write, so a burst costs one syscall. */

export interface TickBuffer {
  push(text: string): void;
  /** Writes what is pending now (before a close or an exit). */
  flush(): void;
}

export interface TickBufferOptions {
  /**
   * Flushed after every other buffer of the same turn. The logger uses it, so that a log line saying a record
   * was written never reaches a reader before the record itself.
   */
  last?: boolean;
}

const first = new Set<TickBuffer>();
const last = new Set<TickBuffer>();
let scheduled = false;
let exitHookInstalled = false;

function flushAll(): void {
  scheduled = false;
  for (const buffer of first) buffer.flush();
  for (const buffer of last) buffer.flush();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(flushAll);
}

export function createTickBuffer(write: (text: string) => void, options: TickBufferOptions = {}): TickBuffer {
  let pending = "";
  const buffer: TickBuffer = {
    push(text) {
      pending += text;
      schedule();
    },
    flush() {
      if (pending === "") return;
      const text = pending;
      pending = "";
      write(text);
    },
  };
  (options.last ? last : first).add(buffer);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Nothing pending may be lost when the process exits between a push and its turn's flush.
    process.once("exit", flushAll);
  }
  return buffer;
}

/** @module `--record`: appends every bus event as `{ at, event, payload }`, one JSON line per event. */
import { HOOK_EVENT_SCHEMAS, type HookBus, type HookEventName } from "../events.js";
import { createJsonlWriter } from "./jsonl-file.js";
import type { WriteErrorHandler } from "./write-errors.js";

export const HOOK_EVENT_NAMES = Object.keys(HOOK_EVENT_SCHEMAS) as HookEventName[];

export interface EventRecorder {
  readonly file: string;
  stop(): void;
}

export interface EventRecorderOptions {
  /** Told when the record cannot be written; the events still reach every other listener. */
  onError?: WriteErrorHandler;
}

/** Subscribes before anything else so the record holds events in the order the bus emitted them. */
export function startEventRecorder(
  bus: HookBus,
  file: string,
  options: EventRecorderOptions = {},
): EventRecorder {
  // Line by line: tests and people read the record while the gateway runs.
  const writer = createJsonlWriter(file, options.onError !== undefined ? { onError: options.onError } : {});
  const listeners = HOOK_EVENT_NAMES.map((event) => {
    const listener = (payload: unknown) => writer.append({ at: new Date().toISOString(), event, payload });
    bus.on(event, listener as never);
    return { event, listener };
  });
  return {
    file,
    stop() {
      for (const { event, listener } of listeners) bus.off(event, listener as never);
      writer.close();
    },
  };
}

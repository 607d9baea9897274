/** @module Lets requests into the plugin's route only while its service runs, and lets those in flight finish before it stops. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteHandler } from "../index.js";
import { notServing } from "./not-serving.js";

/** OpenClaw itself retires a plugin's still-running calls after 5 s on a reload; the gate waits no longer. */
const DRAIN_LIMIT_MS = 5_000;

/**
 * Before the service starts and once it stops (OpenClaw overlaps the old and new registrations during a reload),
 * nothing would carry an accepted event on to OpenClaw, so the route refuses with 503 and the sender retries. A
 * request already let in is answered and its events handed over before the effects stop.
 */
export class ServingGate {
  private serving = false;
  private inFlight = 0;
  private drained: (() => void) | undefined;

  guard(handler: RouteHandler): RouteHandler {
    return async (req: IncomingMessage, res: ServerResponse) => {
      if (!this.serving) return notServing(req, res);
      this.inFlight++;
      try {
        return await handler(req, res);
      } finally {
        if (--this.inFlight === 0) this.drained?.();
      }
    };
  }

  open(): void {
    this.serving = true;
  }

  /** Refuses new requests at once; resolves when those in flight are done, or after the drain limit. */
  async close(): Promise<void> {
    this.serving = false;
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_LIMIT_MS);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.drained = undefined;
  }
}
